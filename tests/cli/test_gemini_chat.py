"""Gemini CLI's spend from its chat file (`ct.gemini_chat`): each reply counted once however
often it is written, cached input moved out of input, thinking counted as output; read
on from where the last read stopped; a line that is not JSON passed over."""

import json

from ct import gemini_chat, transcript
from hypothesis import given
from hypothesis import strategies as st


def reply(reply_id, model="gemini-2.5-flash", **tokens):
    figures = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, **tokens}
    entry = {"id": reply_id, "type": "gemini", "tokens": figures, "model": model}
    return json.dumps(entry) + "\n"


def read(path, reading=None):
    return transcript.read(str(path), reading, gemini_chat.count_line)


def test_a_reply_counts_its_uncached_input_its_output_and_thoughts_and_its_cache(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text(reply("r1", input=100, cached=40, output=20, thoughts=5, tool=3))
    assert read(chat)["totals"] == {"gemini-2.5-flash": [63, 25, 40, 0]}


def test_reading_on_counts_only_what_was_written_since(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text(reply("r1", input=10, output=1))
    first = read(chat)
    with chat.open("a") as more:
        more.write("not json\n" + reply("r1", input=10, output=1) + reply("r2", input=5))
    assert read(chat, first)["totals"] == {"gemini-2.5-flash": [15, 1, 0, 0]}


replies = st.lists(
    st.tuples(
        st.sampled_from(["gemini-a", "gemini-b"]), st.integers(0, 10**6), st.integers(0, 10**4)
    ),
    max_size=20,
)


@given(replies)
def test_a_reply_written_twice_counts_as_once(tmp_path_factory, given_replies):
    folder = tmp_path_factory.mktemp("chat")
    once, twice = folder / "once.jsonl", folder / "twice.jsonl"
    lines = [
        reply(f"r{n}", model, input=i, output=o) for n, (model, i, o) in enumerate(given_replies)
    ]
    once.write_text("".join(lines))
    twice.write_text("".join(line + line for line in lines))
    assert read(once)["totals"] == read(twice)["totals"]
