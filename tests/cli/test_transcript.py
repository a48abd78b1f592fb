"""`ct`'s reading of Claude Code's transcript (cli/ct/transcript.py): each reply's usage
counted once with its largest figures, read on from where the last read stopped; lines
that are not JSON passed over, a last line not yet whole left for later; a transcript
that shrank or was replaced read again from its start. Files written as Claude Code
writes them: one JSON object a line, a reply over several lines sharing its id."""

import json

from ct import transcript

from tests.support.ct_tools import reply_line

OPUS, HAIKU = "claude-opus-5", "claude-haiku-4-5-20251001"


def user_line(text):
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def totals(reading):
    return reading["totals"]


def test_a_reply_over_several_lines_counts_once_with_its_largest_figures(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        user_line("fix it")
        + reply_line("msg_1", OPUS, input=10, output=5, cache_read=100, cache_write=20)
        + reply_line("msg_1", OPUS, input=10, output=40, cache_read=100, cache_write=20)
        + reply_line("msg_2", OPUS, input=3, output=7)
        + reply_line("msg_3", HAIKU, input=1, output=1)
    )
    found = transcript.read(str(path), None)
    assert totals(found) == {OPUS: [13, 47, 100, 20], HAIKU: [1, 1, 0, 0]}


def test_a_later_read_counts_only_what_was_written_since(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5))
    first = transcript.read(str(path), None)
    with path.open("a") as more:
        more.write(reply_line("msg_1", OPUS, output=9) + reply_line("msg_2", OPUS, output=1))
    again = transcript.read(str(path), json.loads(json.dumps(first)))  # kept as JSON
    assert totals(again) == {OPUS: [0, 10, 0, 0]}
    assert again["offset"] == path.stat().st_size


def test_a_line_that_is_not_json_is_passed_over(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5) + "{not json\n" + "[1]\n" + "null\n")
    assert totals(transcript.read(str(path), None)) == {OPUS: [0, 5, 0, 0]}


def test_a_last_line_not_yet_whole_is_counted_once_it_is(tmp_path):
    path = tmp_path / "t.jsonl"
    whole, cut = reply_line("msg_1", OPUS, output=5), reply_line("msg_2", OPUS, output=7)
    path.write_text(whole + cut[:30])
    first = transcript.read(str(path), None)
    assert totals(first) == {OPUS: [0, 5, 0, 0]}
    path.write_text(whole + cut)
    assert totals(transcript.read(str(path), first)) == {OPUS: [0, 12, 0, 0]}


def test_a_transcript_that_shrank_is_read_again_from_its_start(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5) + reply_line("msg_2", OPUS, output=7))
    first = transcript.read(str(path), None)
    path.write_text(reply_line("msg_9", OPUS, output=2))
    assert totals(transcript.read(str(path), first)) == {OPUS: [0, 2, 0, 0]}


def test_a_transcript_rewritten_in_place_to_its_old_length_is_read_again(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5))
    first = transcript.read(str(path), None)
    with path.open("r+") as same:  # the same file, other bytes, then more
        same.write(reply_line("msg_7", OPUS, output=6) + reply_line("msg_8", OPUS, output=1))
    assert totals(transcript.read(str(path), first)) == {OPUS: [0, 7, 0, 0]}


def test_a_replaced_transcript_is_read_from_its_start(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5))
    first = transcript.read(str(path), None)
    (tmp_path / "new.jsonl").write_text(reply_line("msg_1", OPUS, output=5) * 3)
    (tmp_path / "new.jsonl").replace(path)
    assert totals(transcript.read(str(path), first)) == {OPUS: [0, 5, 0, 0]}


def test_a_missing_transcript_leaves_the_reading_as_it_was(tmp_path):
    kept = {"totals": {OPUS: [1, 2, 3, 4]}}
    assert transcript.read(str(tmp_path / "gone.jsonl"), kept) == kept


def test_notices_and_lines_without_usage_count_nothing(tmp_path):
    path = tmp_path / "t.jsonl"
    notice = reply_line("msg_0", "<synthetic>", output=0)
    bare = json.dumps({"type": "assistant", "message": {"id": "m", "model": OPUS}}) + "\n"
    path.write_text(notice + bare + user_line("hi"))
    assert totals(transcript.read(str(path), None)) == {}


def read_to_the_end(path, reading=None):
    """Reads on until the reading is no longer behind: (the reading, how many reads)."""
    reads = 0
    while True:
        reading, reads = transcript.read(str(path), reading), reads + 1
        if not reading["behind"]:
            return reading, reads


def test_a_long_transcript_is_read_a_bounded_part_at_a_time_to_the_same_totals(
    tmp_path, monkeypatch
):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(reply_line(f"msg_{n}", OPUS, input=1, output=2) for n in range(200)))
    whole = transcript.read(str(path), None)
    monkeypatch.setattr(transcript, "READ_MOST", 4096)
    first = transcript.read(str(path), None)
    assert first["behind"] and first["offset"] <= 4096
    found, reads = read_to_the_end(path)
    assert totals(found) == totals(whole) == {OPUS: [200, 400, 0, 0]}
    assert reads >= path.stat().st_size // 4096


def test_a_line_longer_than_a_read_is_passed_over_and_the_next_ones_count(tmp_path, monkeypatch):
    monkeypatch.setattr(transcript, "READ_MOST", 1024)
    path = tmp_path / "t.jsonl"
    huge = json.dumps({"type": "user", "message": {"content": "x" * 5000}}) + "\n"
    path.write_text(
        reply_line("msg_1", OPUS, output=5) + huge + reply_line("msg_2", OPUS, output=7)
    )
    found, _ = read_to_the_end(path)
    assert totals(found) == {OPUS: [0, 12, 0, 0]}
    assert found["offset"] == path.stat().st_size


def test_a_reading_that_caught_up_with_a_partial_last_line_is_not_behind(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(reply_line("msg_1", OPUS, output=5) + '{"type": "assist')
    assert not transcript.read(str(path), None)["behind"]
