"""What a Gemini CLI session spent, from its chat file (`transcript_path`,
`~/.gemini/tmp/<project>/chats/session-*.jsonl`: one JSON object a line, docs/rules.md,
"Every agent"). Each model reply is a line of `type: "gemini"` with its `id`, `model`
and `tokens` (`input`, `output`, `cached`, `thoughts`, `tool`, `total`); Gemini CLI 0.61
writes a reply twice (again when its tool calls are done) with the same id and figures,
so each id counts once. Other lines (the person's, `$set` updates) say nothing of spend.

Google counts cached input inside `input` (the prompt's tokens); the tower's
`input_tokens` are the uncached ones, so the cached share moves to `cache_read_tokens`,
and the tool-use prompt's tokens are input too. Thinking tokens are billed as output, so
they count as output.
"""

import json

from ct.transcript import add_counts, first_sight, whole

# The ids of the latest replies, to count a reply written again once: its copies come
# one after another, so a few are enough.
KEPT_IDS = 64


def count_line(line: bytes, reading: dict) -> None:
    """Count one chat-file line into `reading`'s totals (`transcript.read`'s `count`)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return
    if not isinstance(entry, dict) or entry.get("type") != "gemini":
        return
    tokens, model, reply = entry.get("tokens"), entry.get("model"), entry.get("id")
    if not isinstance(tokens, dict) or not isinstance(model, str) or not model:
        return
    if isinstance(reply, str) and not first_sight(reading, "gemini_ids", reply, KEPT_IDS):
        return
    given, cached = (
        whole(tokens.get("input")) + whole(tokens.get("tool")),
        whole(tokens.get("cached")),
    )
    added = [
        max(0, given - cached),
        whole(tokens.get("output")) + whole(tokens.get("thoughts")),
        cached,
        0,
    ]
    if any(added):
        add_counts(reading, model, added)
