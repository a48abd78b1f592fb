"""What a Claude Code session spent, from its transcript (`transcript_path`): one JSON
object a line, each model reply's token usage in an `assistant` line's `message.usage`,
and a reply written over several lines that share its `message.id` (each repeating or
growing the figures). Each id counts once, with its largest figures, as ccusage counts.

The hooks read on from where they last stopped: a hook's cost follows what was written
since, never the transcript's length. What they keep (`Reading`, in the hooks' state
file) is the per-model totals so far, where the reading stopped, the bytes just before
that point (to notice a file rewritten in place), and the figures of the latest replies
(a reply's lines come together; a few are kept in case they do not). A line that is not
JSON is passed over; a last line not yet whole is left for the next read. A transcript
that shrank, or was replaced, is read again from its start: the totals are made afresh,
so nothing counts twice (and the tower keeps each model's largest report anyway).
"""

import json
import os
from collections.abc import Callable
from typing import BinaryIO

# Claude Code's names for the four counts, in the order of the tower's token fields
# (input, output, cache read, cache write).
COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
KEPT_REPLIES = 64
# The most a hook reads of a record at once (a few hundred milliseconds of counting): a
# longer record is read on by the next hooks, its usage sent once it is caught up.
READ_MOST = 2 * 1024 * 1024
# Bytes kept from before where the reading stopped: Claude Code ends each line with its
# own uuid and time, so these say whether the file still holds what was read.
_TAIL = 256
# Claude Code writes its own notices as assistant lines of this model, with no usage.
_NOT_A_MODEL = "<synthetic>"


def fresh(identity: list[int]) -> dict:
    return {"file": identity, "offset": 0, "tail": "", "totals": {}, "replies": {}}


LineCounter = Callable[[bytes, dict], None]


def read(path: str, reading: dict | None, count: LineCounter | None = None) -> dict:
    """`reading` (what an earlier read kept, or None) carried on towards the end of the
    transcript's last whole line, each line counted by `count` (default: a Claude Code
    transcript's): at most `READ_MOST` bytes a read, so that no record, however long,
    costs a hook more; `behind` says whether more is left. A line longer than that is
    passed over (no usage line is). A transcript that cannot be opened leaves it as it
    was."""
    count = count or count_line
    try:
        with open(path, "rb") as transcript:
            stat = os.fstat(transcript.fileno())
            identity = [stat.st_dev, stat.st_ino]
            if reading is None or not _continues(transcript, stat.st_size, identity, reading):
                reading = fresh(identity)
            transcript.seek(reading["offset"])
            data = transcript.read(READ_MOST)
    except OSError:
        return reading or {}
    skip = 0
    if reading.get("mid_line"):  # the rest of a line too long to count: passed over
        newline = data.find(b"\n")
        skip = len(data) if newline < 0 else newline + 1
        reading["mid_line"] = newline < 0
    end = max(skip, data.rfind(b"\n") + 1)
    for line in data[skip:end].splitlines():
        count(line, reading)
    if end == 0 and len(data) == READ_MOST:  # one line fills a whole read: passed over
        end, reading["mid_line"] = len(data), True
    if end:
        before = bytes.fromhex(reading["tail"]) + data[:end]
        reading["offset"] += end
        reading["tail"] = before[-_TAIL:].hex()
    reading["behind"] = reading["offset"] + (len(data) - end) < stat.st_size
    return reading


def _continues(transcript: BinaryIO, size: int, identity: list[int], reading: dict) -> bool:
    """Whether `reading` stopped in this very file, which still holds what it read."""
    if not reading or reading.get("file") != identity or size < reading.get("offset", 0):
        return False
    tail = bytes.fromhex(reading.get("tail", ""))
    transcript.seek(reading["offset"] - len(tail))
    return transcript.read(len(tail)) == tail


def count_line(line: bytes, reading: dict) -> None:
    """Count one line of a Claude Code transcript into `reading`'s totals."""
    try:
        entry = json.loads(line)
    except ValueError:
        return
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return
    message = entry.get("message")
    if not isinstance(message, dict):
        return
    model, usage = message.get("model"), message.get("usage")
    if not isinstance(model, str) or not model or model == _NOT_A_MODEL:
        return
    if not isinstance(usage, dict):
        return
    counts = [whole(usage.get(name)) for name in COUNTS]
    totals = reading["totals"].setdefault(model, [0, 0, 0, 0])
    reply = message.get("id")
    counted = reading["replies"].get(reply) if isinstance(reply, str) else None
    if counted is not None and counted[0] == model:
        counts = [max(a, b) for a, b in zip(counted[1], counts, strict=True)]
        totals[:] = [t - a + b for t, a, b in zip(totals, counted[1], counts, strict=True)]
    else:
        totals[:] = [t + b for t, b in zip(totals, counts, strict=True)]
    if isinstance(reply, str):
        reading["replies"].pop(reply, None)
        reading["replies"][reply] = [model, counts]
        while len(reading["replies"]) > KEPT_REPLIES:
            reading["replies"].pop(next(iter(reading["replies"])))


def first_sight(reading: dict, key: str, ident: str, kept: int) -> bool:
    """Whether `ident` is new among the latest `kept` idents kept under `key` (it is kept
    now): a record that writes an entry again, one after the other, counts it once."""
    seen = reading.setdefault(key, [])
    if ident in seen:
        return False
    seen[:] = [*seen, ident][-kept:]
    return True


def add_counts(reading: dict, model: str, added: list[int]) -> None:
    """Add `added` (input, output, cache read, cache write) to `model`'s totals."""
    totals = reading["totals"].setdefault(model, [0, 0, 0, 0])
    totals[:] = [t + a for t, a in zip(totals, added, strict=True)]


def whole(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
