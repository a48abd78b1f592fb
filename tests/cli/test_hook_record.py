"""The hooks' record of an agent session (`ct.hook_record`): typed, with a default for
every field, tolerant of what an older `ct` kept, strict about names."""

import json
from dataclasses import asdict

import pytest
from ct.hook_record import HookRecord


def test_a_new_agent_sessions_record_has_every_default():
    record = HookRecord.of({})
    assert (record.session, record.generation, record.handed_seq) == (None, -1, 0)
    assert record.written == [] and record.reported_usage == {}


def test_what_the_state_file_holds_is_read_back_typed():
    record = HookRecord.of({"session": "cc-1", "generation": 0, "written": ["a.py"]})
    assert (record.session, record.generation, record.written) == ("cc-1", 0, ["a.py"])


def test_a_key_an_older_ct_kept_is_ignored():
    assert HookRecord.of({"session": "cc-1", "long_gone": 3}).session == "cc-1"


def test_a_misspelt_field_fails_at_once():
    with pytest.raises(TypeError):
        HookRecord().changed(handed=4)


def test_a_record_round_trips_through_json():
    record = HookRecord(session="cc-1", fenced="STOP.", reported_usage={"m": {"input": 1}})
    assert HookRecord.of(json.loads(json.dumps(asdict(record)))) == record
