"""The in-memory model of open sessions agrees with the streams, whatever the timing."""

import io
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from sessions.domain.vocabulary import BLOCK, CLOSE, START, UNBLOCK, WORK
from sessions.models import Event
from sessions.readmodels import board as board_model
from sessions.readmodels import open_sessions, session_views
from sessions.rules.append import append_event
from tests.conftest import CONFORMANCE, committing_late, conformance_expected, projected_status

# Real commits: PostgreSQL's watermark only moves past transactions that have ended.
pytestmark = pytest.mark.django_db(transaction=True)


def caught_up():
    """The model after two catch-ups: PostgreSQL settles what the first one saw."""
    open_sessions.below_watermark()
    return open_sessions.below_watermark()


def open_on_board():
    rows = board_model.board_rows(None, None, timezone.now() - timedelta(hours=1))
    return {row.session for row in rows if row.status != "closed"}


def start(session_id, user):
    append_event(session_id, START, {"title": session_id}, user=user)


def close(session_id, user):
    append_event(session_id, CLOSE, {}, user=user)


def newest_id():
    return Event.objects.order_by("-id").values_list("id", flat=True).first()


def test_it_holds_the_open_sessions_up_to_the_newest_event(lead):
    for session_id in ("a", "b", "c"):
        start(session_id, lead)
    close("b", lead)
    assert caught_up() == ({"a", "c"}, newest_id())


def test_it_catches_up_with_later_starts_and_closes(lead):
    start("a", lead)
    start("b", lead)
    caught_up()
    start("c", lead)
    close("a", lead)
    assert caught_up() == ({"b", "c"}, newest_id())


def test_a_held_session_closed_before_the_cut_off_leaves_the_board_at_once(lead):
    start("a", lead)
    start("b", lead)
    caught_up()
    with transaction.atomic():  # the model cannot catch up here: it still holds "a"
        close("a", lead)
        later = timezone.now() + timedelta(minutes=1)
        rows = board_model.board_rows(None, None, later)
    assert {session_id for session_id, *_ in rows} == {"b"}


def test_imported_sessions_are_on_the_board_by_their_own_status(lead):
    caught_up()
    call_command("import_jsonl", str(CONFORMANCE / "logs"), stdout=io.StringIO())
    logs = conformance_expected()["sessions"]
    still_open = {session_id for session_id in logs if projected_status(session_id) != "closed"}
    assert still_open and still_open != set(logs)
    assert open_on_board() == still_open  # above the watermark: asked of SQL
    caught_up()
    assert open_on_board() == still_open  # folded into the model


def test_a_reader_inside_a_transaction_does_not_move_the_watermark(lead):
    start("a", lead)
    with transaction.atomic():
        start("gone", lead)
        caught_up()
        transaction.set_rollback(True)
    start("b", lead)  # on SQLite, it takes the id that "gone" had
    assert open_on_board() == {"a", "b"}


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite has one writer at a time: rows always become visible in id order",
)
def test_a_lower_id_that_commits_late_still_reaches_the_board(lead):
    with committing_late(lambda: start("slow", lead)):
        start("quick", lead)  # a higher id, visible first
        caught_up()
        assert open_on_board() == {"quick"}
    caught_up()
    assert open_on_board() == {"quick", "slow"}


def test_the_board_agrees_with_the_streams_after_concurrent_starts_and_closes(lead):
    writers, per_writer = 4, 20
    done = threading.Event()

    def write(writer):
        try:
            for n in range(per_writer):
                start(f"w{writer}-{n}", lead)
                if n % 2:
                    close(f"w{writer}-{n - 1}", lead)
        finally:
            connection.close()

    def read_until_done():
        try:
            while not done.is_set():
                open_on_board()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=writers + 1) as pool:
        reader = pool.submit(read_until_done)
        for future in [pool.submit(write, writer) for writer in range(writers)]:
            future.result(timeout=120)
        done.set()
        reader.result(timeout=30)
    started = Event.objects.filter(type=START).values_list("session", flat=True)
    views = session_views.session_views(started)
    still_open = {session_id for session_id, view in views.items() if view.status != "closed"}
    assert len(still_open) == writers * per_writer // 2
    caught_up()
    assert open_on_board() == still_open


def block(session_id, user, ago):
    fields = {"reason": "waiting"}
    append_event(session_id, BLOCK, fields, user=user, now=timezone.now() - ago)


def test_it_keeps_where_each_open_session_s_blocked_run_began(lead):
    for session_id in ("again", "shut"):
        earlier = timezone.now() - timedelta(hours=4)
        append_event(session_id, START, {"title": session_id}, user=lead, now=earlier)
    block("again", lead, timedelta(hours=3))
    append_event("again", UNBLOCK, {}, user=lead, now=timezone.now() - timedelta(hours=2))
    block("again", lead, timedelta(hours=1))
    block("again", lead, timedelta(minutes=30))
    block("shut", lead, timedelta(hours=1))
    close("shut", lead)
    caught_up()
    runs = open_sessions.blocked_runs()
    assert set(runs) == {"again"}
    assert timedelta(minutes=59) < timezone.now() - runs["again"] < timedelta(minutes=61)


def test_blocks_and_unblocks_after_the_catch_up_move_the_runs(lead):
    start("a", lead)
    start("b", lead)
    block("a", lead, timedelta(hours=1))
    caught_up()
    with transaction.atomic():  # the model cannot catch up here: these are above it
        append_event("a", UNBLOCK, {}, user=lead)
        block("b", lead, timedelta(minutes=5))
        runs = open_sessions.blocked_runs()
    assert set(runs) == {"b"}
    caught_up()  # now in the model
    assert set(open_sessions.blocked_runs()) == {"b"}


def on_branch(session_id, user, branch, repo="acme/shop"):
    append_event(session_id, WORK, {"repo": repo, "branch": branch}, user=user)


def branches():
    places = open_sessions.work_marks().places
    return {session: found.place[1] for session, found in places.items()}


def test_it_keeps_each_open_session_s_repo_and_branch(lead):
    for session_id in ("a", "b", "shut", "quiet"):
        start(session_id, lead)
    on_branch("a", lead, "fix-login", repo="Acme/Shop")  # kept as GitHub compares names
    on_branch("b", lead, "fix-cart")
    on_branch("shut", lead, "fix-login")
    close("shut", lead)
    append_event("quiet", WORK, {"repo": "acme/shop"}, user=lead)  # no branch: no place
    caught_up()
    assert branches() == {"a": "fix-login", "b": "fix-cart"}
    (repo, _), opened, since = open_sessions.work_marks().places["a"]
    assert repo == "acme/shop"
    assert since == Event.objects.get(session="a", seq=2).timestamp
    assert opened == Event.objects.get(session="a", seq=1).timestamp


def test_work_reports_after_the_catch_up_move_the_places(lead):
    start("a", lead)
    start("b", lead)
    on_branch("a", lead, "fix-login")
    caught_up()
    with transaction.atomic():  # the model cannot catch up here: these are above it
        on_branch("a", lead, "fix-cart")
        on_branch("b", lead, "fix-login")
        start("c", lead)
        on_branch("c", lead, "fix-docs")
        above = branches()
    assert above == {"a": "fix-cart", "b": "fix-login", "c": "fix-docs"}
    caught_up()  # now in the model
    assert branches() == above
    close("b", lead)
    caught_up()
    assert branches() == {"a": "fix-cart", "c": "fix-docs"}


def check(session_id, user, state, commit="c0ffee" + "0" * 34):
    fields = {"commit": commit, "check": "ci/test", "check_state": state}
    append_event(session_id, WORK, fields, user=user)


def test_it_keeps_since_when_each_open_session_s_checks_are_red(lead):
    for session_id in ("red", "green", "shut"):
        start(session_id, lead)
        append_event(session_id, WORK, {"commit": "c0ffee" + "0" * 34}, user=lead)
    check("red", lead, "failure")
    check("green", lead, "success")
    check("shut", lead, "failure")
    close("shut", lead)
    caught_up()
    failing = open_sessions.work_marks().failing
    assert failing == {"red": Event.objects.get(session="red", seq=3).timestamp}


def test_checks_after_the_catch_up_move_the_red_marks(lead):
    for session_id in ("a", "b"):
        start(session_id, lead)
        append_event(session_id, WORK, {"commit": "c0ffee" + "0" * 34}, user=lead)
    check("a", lead, "failure")
    caught_up()
    with transaction.atomic():  # above the watermark: read again
        append_event("a", WORK, {"commit": "beef" + "0" * 36}, user=lead)  # a new head: no runs yet
        check("b", lead, "failure")
        above = set(open_sessions.work_marks().failing)
    assert above == {"b"}
    caught_up()
    assert set(open_sessions.work_marks().failing) == {"b"}
