"""The JSONL bridge: codec, import and export commands, conformance and round trips."""

import shutil
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.domain import jsonl, projections
from sessions.domain.jsonl import LogError, decode_log, encode_log
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    ALLOWED_FROM,
    BLOCK,
    CHECK_STATES,
    CLOSE,
    MESSAGE,
    OUTCOMES,
    PR_STATES,
    REVIEW,
    START,
    STATUS_AFTER,
    TOKEN_FIELDS,
    UNBLOCK,
    USAGE,
    WORK,
    text_pattern,
)
from sessions.models import Event
from sessions.rules.append import append_event
from tests.conftest import CONFORMANCE, conformance_expected
from tests.support.logs import (
    DEMO,
    export_logs,
    import_logs,
)

VALID_LOGS = sorted(conformance_expected()["sessions"])
INVALID_LOGS = sorted(conformance_expected()["invalid"].items())


# Conformance, through import → API → export


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("session_id", VALID_LOGS)
def test_conformance_logs_pass_through_import_api_and_export(
    session_id, api, alice, token_for, tmp_path
):
    expected = conformance_expected()["sessions"][session_id]
    canonical = "".join(line + "\n" for line in expected["canonical_export"]).encode()
    assert import_logs(CONFORMANCE / "logs" / f"{session_id}.jsonl") == (None, "")
    token = token_for(alice)
    view = api("GET", f"/api/sessions/{session_id}", token=token).json()
    assert [b["reason"] for b in view["blockers"]] == expected["blockers"]
    for key in ("status", "next_action", "owner", "title", "seq"):
        assert view[key] == expected[key]
    assert api("GET", f"/api/sessions/{session_id}/events.jsonl", token=token).body == canonical
    assert export_logs(tmp_path) == {f"{session_id}.jsonl": canonical}


@pytest.mark.django_db
@pytest.mark.parametrize(("file_name", "line"), INVALID_LOGS)
def test_invalid_conformance_logs_are_refused_at_their_line(file_name, line):
    error, stderr = import_logs(CONFORMANCE / "invalid" / file_name)
    assert error is not None
    assert f"{file_name}:{line}: " in stderr
    assert Event.objects.count() == 0


# The import command


@pytest.mark.django_db
def test_a_folder_imports_its_valid_files_and_reports_the_refused_ones(tmp_path):
    for path in [*(CONFORMANCE / "logs").iterdir(), CONFORMANCE / "invalid" / "not-json.jsonl"]:
        shutil.copy(path, tmp_path)
    error, stderr = import_logs(tmp_path)
    assert "1 file(s) refused" in str(error)
    assert "not-json.jsonl:2: not valid JSON" in stderr
    assert set(Event.objects.values_list("session", flat=True)) == set(VALID_LOGS)


@pytest.mark.django_db
def test_importing_the_same_events_again_is_a_no_op():
    path = CONFORMANCE / "logs" / "lifecycle.jsonl"
    import_logs(path)
    assert import_logs(path) == (None, "")
    assert Event.objects.count() == 5


@pytest.mark.django_db
def test_importing_different_events_for_an_existing_session_is_refused(tmp_path, alice):
    append_event("lifecycle", START, {"title": "Something else"}, user=alice)
    error, stderr = import_logs(CONFORMANCE / "logs" / "lifecycle.jsonl")
    assert error is not None and "already exists with different events" in stderr
    assert Event.objects.count() == 1


@pytest.mark.django_db
def test_a_dry_run_validates_and_writes_nothing():
    assert import_logs(CONFORMANCE / "logs", dry_run=True)[0] is None
    error, stderr = import_logs(CONFORMANCE / "invalid", dry_run=True)
    assert error is not None and "unknown-field.jsonl:2" in stderr
    assert Event.objects.count() == 0


@pytest.mark.django_db
def test_actors_that_are_not_users_are_kept_as_names(django_user_model):
    import_logs(CONFORMANCE / "logs" / "quiet.jsonl")
    assert Event.objects.get().actor == "agent-3"
    assert not django_user_model.objects.filter(username="agent-3").exists()


@pytest.mark.django_db
def test_a_missing_file_is_reported_not_raised(tmp_path):
    error, stderr = import_logs(tmp_path / "absent.jsonl")
    assert error is not None and "absent.jsonl: cannot read the file" in stderr


@pytest.mark.django_db
def test_exporting_an_unknown_id_fails_clearly(tmp_path):
    with pytest.raises(CommandError, match="No such session"):
        export_logs(tmp_path, "nope")


# Round trips


@pytest.mark.django_db(transaction=True)
def test_the_demo_set_survives_export_import_export_byte_for_byte(tmp_path):
    assert import_logs(DEMO) == (None, "")
    first = export_logs(tmp_path / "first")
    assert first == {path.name: path.read_bytes() for path in sorted(DEMO.glob("*.jsonl"))}
    call_command("flush", interactive=False)  # an empty database
    assert import_logs(tmp_path / "first") == (None, "")
    assert export_logs(tmp_path / "second") == first


def test_the_demo_set_holds_every_status_from_people_and_agents():
    logs = [decode_log(path.name, path.read_bytes())[1] for path in DEMO.glob("*.jsonl")]
    logs = [events for events in logs if events[0].type == "session_start"]
    statuses = {projections.status(events) for events in logs}
    actors = {events[0].actor for events in logs}
    assert len(logs) >= 12
    assert statuses == {"active", "blocked", "in_review", "closed"}
    assert any(a.startswith("agent-") for a in actors) and any("-" not in a for a in actors)


@st.composite
def valid_logs(draw):
    """Any stream the transition table allows, with arbitrary texts and gaps."""
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=draw(st.integers(0, 10**12)))
    # Any text the vocabulary accepts: one line for titles and actors, lines for notes.
    lines = st.from_regex(text_pattern("line"), fullmatch=True).filter(lambda t: len(t) <= 60)
    texts = st.from_regex(text_pattern("text"), fullmatch=True).filter(lambda t: len(t) <= 60)
    outcomes = st.sampled_from(OUTCOMES)
    events, status = [], None
    for seq in range(1, draw(st.integers(1, 12)) + 1):
        allowed = [t for t, sources in ALLOWED_FROM.items() if status in sources]
        if not allowed:
            break
        event_type = draw(st.sampled_from(allowed))
        fields = {}
        if event_type == START:
            fields = {"title": draw(lines), "note": draw(st.none() | texts)}
        elif event_type == BLOCK:
            fields = {"reason": draw(texts)}
        elif event_type == CLOSE:
            fields = {"note": draw(st.none() | texts), "outcome": draw(st.none() | outcomes)}
        elif event_type == MESSAGE:
            fields = {"note": draw(texts)}
        elif event_type == WORK:
            fields = draw(work_reports())
        elif event_type == USAGE:
            fields = draw(usage_reports())
        else:
            fields = {"note": draw(st.none() | texts)}
        moment += timedelta(microseconds=draw(st.integers(0, 10**9)))
        events.append(EventRecord("gen", seq, event_type, moment, draw(lines), **fields))
        status = STATUS_AFTER.get(event_type, status)  # progress and messages keep it
    return events


def usage_reports():
    """Any valid `session_usage`: a model's four token totals."""
    counts = st.integers(0, 10**15)
    return st.fixed_dictionaries(
        {
            "model": st.sampled_from(["claude-sonnet-4-5-20250929", "claude-opus-5", "mine ✓"]),
            **{name: counts for name in TOKEN_FIELDS},
        }
    )


def work_reports():
    """Any valid `session_work`: where the work is, a pull request, or a check run."""
    commits = st.from_regex(r"[0-9a-f]{40}", fullmatch=True)
    branches = st.from_regex(r"[a-z][a-z0-9/_-]{0,30}", fullmatch=True).filter(
        lambda b: ".." not in b
    )
    return st.one_of(
        st.fixed_dictionaries(
            {"repo": st.sampled_from(["acme/shop", "Acme-Corp/shop.api"])},
            optional={"branch": branches, "commit": commits},
        ),
        st.fixed_dictionaries(
            {"pr": st.integers(1, 10**9)},
            optional={
                "pr_url": st.just("https://github.com/acme/shop/pull/7"),
                "pr_state": st.sampled_from(PR_STATES),
            },
        ),
        st.fixed_dictionaries(
            {
                "commit": commits,
                "check": st.sampled_from(["ci/test", "Lint ✓"]),
                "check_state": st.sampled_from(CHECK_STATES),
            }
        ),
    )


@given(valid_logs())
def test_any_valid_log_decodes_to_what_was_encoded(events):
    text = encode_log(events)
    assert decode_log("gen.jsonl", text.encode())[1] == events


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=valid_logs())
@pytest.mark.django_db
def test_any_valid_log_survives_import_and_export_byte_for_byte(events, tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    session_id = f"gen-{Event.objects.count()}"
    events = [e._replace(session=session_id) for e in events]
    (folder / f"{session_id}.jsonl").write_bytes(encode_log(events).encode())
    assert import_logs(folder) == (None, "")
    out = export_logs(folder / "out", session_id)
    assert out[f"{session_id}.jsonl"] == encode_log(events).encode()


# The codec's leniencies and refusals


def decode(text, name="s.jsonl"):
    return decode_log(name, text.encode())[1]


LINE = '{"type":"session_start","timestamp":"2026-11-29T09:00:00Z","actor":"a","title":"t"}\n'


def test_session_and_seq_may_be_left_out():
    assert decode(LINE)[0][:2] == ("s", 1)


def test_other_utc_offsets_are_converted_to_utc():
    event = decode(LINE.replace("09:00:00Z", "11:30:00.25+02:00"))[0]
    assert event.timestamp == datetime(2026, 11, 29, 9, 30, 0, 250000, tzinfo=UTC)


def test_lines_are_ordered_by_timestamp_file_order_breaking_ties():
    block = '{"type":"session_block","timestamp":"%s","actor":"a","reason":"%s"}\n'
    tie = "2026-11-29T09:30:00Z"
    text = (
        block % ("2026-11-29T10:00:00Z", "later") + LINE + block % (tie, "1") + block % (tie, "2")
    )
    assert [e.reason for e in decode(text)] == [None, "1", "2", "later"]


def test_a_last_line_without_a_newline_is_accepted():
    assert len(decode(LINE.rstrip("\n"))) == 1


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (LINE.replace('"type"', '"session":"other","type"'), 1, "differs from the file name"),
        (LINE.replace('"type"', '"seq":2,"type"'), 1, "should be 1"),
        (LINE.replace("2026-11-29T09:00:00Z", "yesterday"), 1, "not an ISO 8601"),
        (LINE.replace("09:00:00Z", "09:00:00"), 1, "no UTC offset"),
        (LINE + "\n" + LINE, 2, "empty line"),
        (LINE + LINE, 2, "already exists"),
        (
            '{"type":"session_close","timestamp":"2026-11-29T09:00:00Z","actor":"a"}\n',
            1,
            "no events yet",
        ),
        (LINE.replace('"actor":"a"', '"actor":""'), 1, "actor"),
        ("[1]\n", 1, "JSON object"),
        ("", 1, "no events"),
        (LINE + "[" * 100_000 + "]" * 100_000 + "\n", 2, "nested too deeply"),
        (LINE.replace('"type"', '"x":' + "[" * 100_000 + "]" * 100_000 + ',"type"'), 1, "nested"),
        (LINE.replace('"actor":"a"', '"actor":"a","actor":"b"'), 1, "'actor' is given twice"),
        (LINE.replace('"type"', '"seq":NaN,"type"'), 1, "seq must be a whole number"),
        ("\ufeff" + LINE, 1, "BOM"),
    ],
)
def test_the_codec_refuses_with_the_line_and_a_reason(text, line, words):
    with pytest.raises(LogError) as refused:
        decode(text)
    assert refused.value.line == line
    assert words in refused.value.reason


def test_an_event_later_than_a_day_past_the_clock_is_refused_at_its_line():
    latest = datetime(2026, 11, 30, 9, tzinfo=UTC)
    later = LINE.replace("2026-11-29T09:00:00Z", "2026-11-30T09:00:01Z")
    with pytest.raises(LogError) as refused:
        decode_log("s.jsonl", later.encode(), latest=latest)
    assert refused.value.line == 1
    assert "later than one day past this machine's clock" in refused.value.reason
    assert decode_log("s.jsonl", LINE.encode(), latest=latest)[1][0].seq == 1


@pytest.mark.django_db
def test_import_refuses_an_event_from_the_far_future_naming_its_file_and_line(tmp_path):
    (tmp_path / "future.jsonl").write_text(
        log_line("2026-11-29T09:00:00Z")
        + log_line("9999-12-31T00:00:00Z", seq=2)
        .replace("session_start", "session_block")
        .replace('"title":"t"', '"reason":"r"')
    )
    error, stderr = import_logs(tmp_path)
    assert error is not None
    assert (
        f"{tmp_path / 'future.jsonl'}:2: timestamp 9999-12-31T00:00:00.000000Z is later" in stderr
    )
    assert not Event.objects.filter(session="future").exists()


def test_invalid_utf8_is_refused_at_its_line():
    with pytest.raises(LogError, match="line 2: not valid UTF-8"):
        decode_log("s.jsonl", LINE.encode() + b'{"type":"\xff"}\n')


@pytest.mark.parametrize("name", ["../etc.jsonl", ".hidden.jsonl", "-x.jsonl", "sp ace.jsonl"])
def test_a_file_name_that_is_no_session_id_is_refused(name):
    with pytest.raises(LogError, match="session id"):
        decode(LINE, name=name)


def test_export_writes_the_canonical_form():
    event = EventRecord("s", 1, REVIEW, datetime(2026, 11, 29, 9, tzinfo=UTC), "é", note="ok ✓")
    assert jsonl.encode_event(event) == (
        '{"session":"s","seq":1,"type":"session_review",'
        '"timestamp":"2026-11-29T09:00:00.000000Z","actor":"é","note":"ok ✓"}\n'
    )


def test_export_leaves_absent_optional_fields_out():
    for event_type in (UNBLOCK, CLOSE):
        event = EventRecord("s", 2, event_type, datetime(2026, 11, 29, tzinfo=UTC), "a")
        assert jsonl.encode_event(event).endswith('"actor":"a"}\n')


@pytest.mark.django_db
def test_large_imports_show_progress(tmp_path, monkeypatch):
    from sessions.management.commands import import_jsonl

    monkeypatch.setattr(import_jsonl, "PROGRESS_EVERY", 2)
    for path in (CONFORMANCE / "logs").iterdir():
        shutil.copy(path, tmp_path)
    _, stderr = import_logs(tmp_path)
    assert "2/5 files" in stderr and "4/5 files" in stderr


# Timestamps at the ends of the calendar, and export's file handling (issue 9).


def log_line(timestamp, seq=1):
    return (
        f'{{"seq":{seq},"type":"session_start","timestamp":"{timestamp}",'
        f'"actor":"a","title":"t"}}\n'
    )


@pytest.mark.django_db
@pytest.mark.parametrize("timestamp", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_timestamp_outside_the_calendar_is_refused_and_later_files_still_import(
    tmp_path, timestamp, dry_run
):
    (tmp_path / "a-edge.jsonl").write_text(log_line(timestamp))
    (tmp_path / "b-fine.jsonl").write_text(log_line("2026-11-29T09:00:00Z"))
    error, stderr = import_logs(tmp_path, dry_run=dry_run)
    assert error is not None
    assert f"{tmp_path / 'a-edge.jsonl'}:1: timestamp" in stderr
    assert "outside the years" in stderr
    assert Event.objects.filter(session="b-fine").exists() == (not dry_run)
    assert not Event.objects.filter(session="a-edge").exists()


@pytest.mark.django_db
def test_a_year_before_1000_exports_in_a_form_that_imports_again(tmp_path):
    (tmp_path / "old.jsonl").write_text(log_line("0999-01-01T00:00:00Z"))
    assert import_logs(tmp_path / "old.jsonl") == (None, "")
    exported = export_logs(tmp_path / "out")["old.jsonl"]
    assert b'"timestamp":"0999-01-01T00:00:00.000000Z"' in exported
    assert decode_log("old.jsonl", exported)[1][0].timestamp.year == 999


def test_export_replaces_a_symlink_instead_of_writing_through_it(tmp_path, started):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{started}.jsonl").symlink_to(outside)
    export_logs(out, started)
    assert outside.read_text() == "keep me"
    assert not (out / f"{started}.jsonl").is_symlink()
    assert decode_log(f"{started}.jsonl", (out / f"{started}.jsonl").read_bytes())


def test_export_leaves_no_temporary_files(tmp_path, started):
    assert list(export_logs(tmp_path / "out")) == [f"{started}.jsonl"]


def test_export_to_a_file_fails_clearly(tmp_path, started):
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(CommandError, match="is a file"):
        export_logs(target)


def test_export_over_a_folder_in_the_way_fails_clearly(tmp_path, started):
    (tmp_path / f"{started}.jsonl").mkdir()
    with pytest.raises(CommandError, match="is a folder"):
        export_logs(tmp_path)


def test_a_file_longer_than_a_stream_may_be_is_refused(monkeypatch):
    monkeypatch.setattr("sessions.domain.vocabulary.MAX_STREAM_EVENTS", 2)
    lines = log_line("2026-11-29T09:00:00Z") + (
        '{"seq":2,"type":"session_block","timestamp":"2026-11-29T09:01:00Z","actor":"a",'
        '"reason":"r"}\n{"seq":3,"type":"session_unblock","timestamp":"2026-11-29T09:02:00Z",'
        '"actor":"a"}\n'
    )
    with pytest.raises(LogError, match="at most 2 events"):
        decode_log("long.jsonl", lines.encode())


def test_a_session_file_that_fills_its_stream_without_a_close_is_refused(monkeypatch):
    monkeypatch.setattr("sessions.domain.vocabulary.MAX_STREAM_EVENTS", 2)
    lines = log_line("2026-11-29T09:00:00Z") + (
        '{"seq":2,"type":"session_block","timestamp":"2026-11-29T09:01:00Z","actor":"a",'
        '"reason":"r"}\n'
    )
    with pytest.raises(LogError, match="without a session_close") as refused:
        decode_log("full.jsonl", lines.encode())
    assert refused.value.line == 2


def test_a_session_file_that_fills_its_stream_with_its_close_last_is_taken(monkeypatch):
    monkeypatch.setattr("sessions.domain.vocabulary.MAX_STREAM_EVENTS", 2)
    lines = log_line("2026-11-29T09:00:00Z") + (
        '{"seq":2,"type":"session_close","timestamp":"2026-11-29T09:01:00Z","actor":"a"}\n'
    )
    assert len(decode_log("full.jsonl", lines.encode())[1]) == 2


def _first_repeat(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers()), max_size=8))
def test_an_object_is_refused_naming_its_first_repeated_key(pairs):
    repeated = _first_repeat(pairs)
    if repeated is None:
        assert jsonl.object_without_repeats(pairs) == dict(pairs)
    else:
        with pytest.raises(jsonl.RepeatedKey, match=f"the key {repeated!r} is given twice"):
            jsonl.object_without_repeats(pairs)
