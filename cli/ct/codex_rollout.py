"""What a Codex session spent, from its rollout file (`transcript_path`: one JSON object a
line, docs/rules.md, "Every agent"). Codex writes the session's running totals in `event_msg`
lines of type `token_count` (`info.total_token_usage`), without the model's name: that is
in the latest `turn_context` line's `payload.model`. Each total's growth since the last is
counted to the model then in use, so a total written twice counts once, and a session that
changes model mid-way has each model's share.

OpenAI counts cached input (read or written) inside `input_tokens` (their sum with the
output is `total_tokens`); the tower's `input_tokens` are the uncached ones (as
Anthropic's), so the cached shares move to `cache_read_tokens` and `cache_write_tokens`.
Output tokens include the reasoning ones, as OpenAI bills them.
"""

import json

from ct.transcript import add_counts, whole

_CODEX_COUNTS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def count_line(line: bytes, reading: dict) -> None:
    """Count one rollout line into `reading`'s totals (`transcript.read`'s `count`)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return
    payload = entry.get("payload") if isinstance(entry, dict) else None
    if not isinstance(payload, dict):
        return
    if entry.get("type") == "turn_context":
        model = payload.get("model")
        if isinstance(model, str) and model:
            reading["model"] = model
        return
    if entry.get("type") != "event_msg" or payload.get("type") != "token_count":
        return
    info = payload.get("info")
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    if not isinstance(total, dict):
        return
    now = [whole(total.get(name)) for name in _CODEX_COUNTS]
    before = reading.get("codex_total") or [0, 0, 0, 0]
    grown = [max(0, a - b) for a, b in zip(now, before, strict=True)]
    reading["codex_total"] = [max(a, b) for a, b in zip(now, before, strict=True)]
    model = reading.get("model")
    if not model or not any(grown):
        return
    all_input, cached, cache_written, output = grown
    added = [max(0, all_input - cached - cache_written), output, cached, cache_written]
    add_counts(reading, model, added)
