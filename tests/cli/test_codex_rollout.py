"""Codex's spend from its rollout file (`ct.codex_rollout`): the running totals' growth,
each to the model then in use; read on from where the last read stopped; a line that is
not JSON passed over, a rewritten file read again from its start."""

import json

from ct import codex_rollout, transcript
from hypothesis import given
from hypothesis import strategies as st


def line(entry):
    return json.dumps(entry) + "\n"


def context(model):
    return line({"type": "turn_context", "payload": {"model": model}})


def total(total_input, cached, output):
    usage = {"input_tokens": total_input, "cached_input_tokens": cached, "output_tokens": output}
    return line(
        {
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"total_token_usage": usage}},
        }
    )


def read(path, reading=None):
    return transcript.read(str(path), reading, codex_rollout.count_line)


def test_a_change_of_model_gives_each_model_its_share(tmp_path):
    rollout = tmp_path / "r.jsonl"
    rollout.write_text(context("gpt-a") + total(100, 0, 10) + context("gpt-b") + total(250, 50, 30))
    assert read(rollout)["totals"] == {"gpt-a": [100, 10, 0, 0], "gpt-b": [100, 20, 50, 0]}


def test_reading_on_counts_only_what_was_written_since(tmp_path):
    rollout = tmp_path / "r.jsonl"
    rollout.write_text(context("gpt-a") + total(100, 0, 10))
    reading = read(rollout)
    with rollout.open("a") as more:
        more.write("not json\n" + total(300, 100, 20) + '{"type": "event_msg", "payl')
    assert read(rollout, reading)["totals"] == {"gpt-a": [200, 20, 100, 0]}


def test_a_rewritten_rollout_is_read_again_from_its_start(tmp_path):
    rollout = tmp_path / "r.jsonl"
    rollout.write_text(context("gpt-a") + total(500, 0, 50) + total(900, 0, 90))
    reading = read(rollout)
    rollout.write_text(context("gpt-a") + total(40, 0, 4))
    assert read(rollout, reading)["totals"] == {"gpt-a": [40, 4, 0, 0]}


def test_a_missing_rollout_leaves_the_reading_as_it_was(tmp_path):
    assert read(tmp_path / "gone.jsonl", {"totals": {"m": [1, 2, 3, 0]}}) == {
        "totals": {"m": [1, 2, 3, 0]}
    }


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=20))
def test_the_totals_never_pass_the_last_running_total(steps):
    reading = {"totals": {}, "model": "m"}
    running = [0, 0]
    for grow_in, grow_out in steps:
        running = [running[0] + grow_in, running[1] + grow_out]
        codex_rollout.count_line(total(running[0], 0, running[1]).encode(), reading)
        codex_rollout.count_line(total(running[0], 0, running[1]).encode(), reading)  # twice
    assert reading["totals"].get("m", [0, 0, 0, 0])[:2] == running
