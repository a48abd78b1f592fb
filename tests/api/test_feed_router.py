"""The global feed: every event once, in position order, after a cursor; narrowed by
type, stream or plan; never missing or repeating an event while writers race."""

import threading
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import psycopg
import pytest
from django.db import connection

from sessions.domain.vocabulary import BLOCK, CLOSE, PLAN_CREATE, START, UNBLOCK
from sessions.models import Event
from sessions.readmodels import feed as feed_model
from sessions.rules.append import append_event
from tests.conftest import committing_late

pytestmark = pytest.mark.django_db(transaction=True)


def follow(api, token, query="", limit=3):
    """Every item of the feed, page by page from position 0, as a consumer would."""
    items, after = [], 0
    while True:
        answer = api("GET", f"/api/feed?after={after}&limit={limit}{query}", token=token)
        assert answer.status == 200, answer.body
        page = answer.json()
        items += page["items"]
        if not page["items"]:
            return items, page["next_after"]
        assert page["next_after"] > after
        after = page["next_after"]


@pytest.fixture
def histories(alice):
    append_event("fix-login", START, {"title": "Fix login"}, user=alice)
    append_event("fix-login", BLOCK, {"reason": "needs CI secrets"}, user=alice)
    append_event("docs", START, {"title": "Docs"}, user=alice)
    append_event("fix-login", UNBLOCK, {}, user=alice)
    append_event("docs", CLOSE, {}, user=alice)


def test_the_feed_gives_every_event_once_in_position_order(api, alice, token_for, histories):
    items, _ = follow(api, token_for(alice))
    assert [(i["session"], i["seq"], i["type"]) for i in items] == [
        ("fix-login", 1, START),
        ("fix-login", 2, BLOCK),
        ("docs", 1, START),
        ("fix-login", 3, UNBLOCK),
        ("docs", 2, CLOSE),
    ]
    positions = [item["position"] for item in items]
    assert positions == sorted(set(positions))
    assert items[1]["reason"] == "needs CI secrets" and items[1]["actor"] == "alice"


def test_a_consumer_asking_again_after_next_after_gets_only_what_is_new(
    api, alice, token_for, histories
):
    token = token_for(alice)
    _, cursor = follow(api, token)
    append_event("docs-2", START, {"title": "More docs"}, user=alice)
    page = api("GET", f"/api/feed?after={cursor}", token=token).json()
    assert [(i["session"], i["type"]) for i in page["items"]] == [("docs-2", START)]


def test_a_limit_of_0_gives_where_to_follow_from_now_on(api, alice, token_for, histories):
    token = token_for(alice)
    _, cursor = follow(api, token)
    now = api("GET", "/api/feed?limit=0&after=0", token=token).json()
    assert now == {"items": [], "next_after": cursor}
    append_event("docs-2", START, {"title": "More docs"}, user=alice)
    page = api("GET", f"/api/feed?after={now['next_after']}", token=token).json()
    assert [(i["session"], i["type"]) for i in page["items"]] == [("docs-2", START)]


def test_an_appends_answer_carries_its_position_in_the_feed(api, alice, token_for):
    token = token_for(alice)
    api("POST", "/api/sessions", {"id": "s", "title": "T"}, token=token)
    body = {"type": BLOCK, "reason": "keys"}
    answer = api("POST", "/api/sessions/s/events", body, token=token).json()
    page = api("GET", "/api/feed?stream=s", token=token).json()
    assert answer["position"] == page["items"][-1]["position"]
    again = api(
        "POST", "/api/sessions/s/events", body, token=token, headers={"Idempotency-Key": "k"}
    )
    repeated = api(
        "POST", "/api/sessions/s/events", body, token=token, headers={"Idempotency-Key": "k"}
    )
    assert repeated.json()["position"] == again.json()["position"]


@pytest.mark.parametrize(
    "query, expected",
    [
        (f"&type={BLOCK}", [("fix-login", 2)]),
        ("&stream=docs", [("docs", 1), ("docs", 2)]),
    ],
)
def test_the_feed_narrows_by_type_and_by_stream(api, alice, token_for, histories, query, expected):
    items, cursor = follow(api, token_for(alice), query)
    assert [(i["session"], i["seq"]) for i in items] == expected
    assert cursor == Event.objects.order_by("-id").first().id  # past the rows it skipped


def test_the_feed_of_a_plan_holds_its_events_and_its_node_sessions(api, alice, token_for):
    append_event(
        "launch",
        PLAN_CREATE,
        {"title": "Launch", "nodes": [{"key": "a", "title": "A"}]},
        user=alice,
    )
    append_event("elsewhere", START, {"title": "Unrelated"}, user=alice)
    append_event("on-a", START, {"title": "A", "plan": "launch", "node": "a"}, user=alice)
    append_event("on-a", CLOSE, {}, user=alice)
    items, _ = follow(api, token_for(alice), "&plan=launch")
    assert [
        (i.get("plan") if i["type"] == PLAN_CREATE else i["session"], i["type"]) for i in items
    ] == [
        ("launch", PLAN_CREATE),
        ("on-a", START),
        ("on-a", CLOSE),
    ]


@pytest.mark.parametrize(
    "query, problem",
    [("limit=-1", "limit"), ("limit=1001", "limit"), ("after=-1", "after"), ("type=nope", "type")],
)
def test_a_bad_feed_query_is_refused_saying_which_parameter(api, alice, token_for, query, problem):
    answer = api("GET", f"/api/feed?{query}", token=token_for(alice))
    assert answer.status == 400
    assert problem in answer.body.decode()


def test_the_feed_needs_a_token(api):
    assert api("GET", "/api/feed").status == 401


def test_a_consumer_following_8_racing_writers_misses_and_repeats_nothing(api, alice, token_for):
    token, writers, per_writer = token_for(alice), 8, 15
    done = threading.Event()

    def write(writer):
        try:
            for n in range(per_writer):
                session = f"w{writer}-{n // 3}"
                if n % 3 == 0:
                    append_event(session, START, {"title": "racing"}, user=alice)
                else:
                    append_event(session, BLOCK, {"reason": f"r{n}"}, user=alice)
        finally:
            connection.close()

    def consume():
        seen, after = [], 0
        while True:
            finishing = done.is_set()
            page = api("GET", f"/api/feed?after={after}&limit=7", token=token).json()
            seen += page["items"]
            after = page["next_after"]
            if finishing and not page["items"]:
                return seen

    with ThreadPoolExecutor(max_workers=writers + 1) as pool:
        consumer = pool.submit(consume)
        for future in [pool.submit(write, w) for w in range(writers)]:
            future.result(timeout=120)
        done.set()
        seen = consumer.result(timeout=120)
    table = list(Event.objects.order_by("id").values_list("id", "session", "seq"))
    assert len(table) == writers * per_writer
    assert [(i["position"], i["session"], i["seq"]) for i in seen] == table


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite has one writer at a time: rows always become visible in id order",
)
def test_the_feed_waits_for_a_lower_position_that_commits_late(alice):
    with committing_late(lambda: append_event("slow", START, {"title": "slow"}, user=alice)):
        append_event("quick", START, {"title": "quick"}, user=alice)  # a higher position
        found, cursor = feed_model.feed(0, 100)
        assert found == [] and cursor == 0
    found, _ = feed_model.feed(cursor, 100)
    assert [event.session for _, event in found] == ["slow", "quick"]


def test_a_page_of_long_texts_is_cut_by_its_size_and_the_rest_follows(
    api, alice, token_for, monkeypatch
):
    monkeypatch.setattr("sessions.domain.vocabulary.MAX_FEED_PAGE_CHARACTERS", 2500)
    append_event("long", START, {"title": "Long notes"}, user=alice)
    for n in range(5):
        append_event("long", BLOCK, {"reason": f"{n} " + "x" * 998}, user=alice)
    token = token_for(alice)
    first = api("GET", "/api/feed?after=0&limit=100", token=token).json()
    assert [item["seq"] for item in first["items"]] == [1, 2, 3]
    assert first["next_after"] == first["items"][-1]["position"]
    items, _ = follow(api, token, limit=100)
    assert [item["seq"] for item in items] == [1, 2, 3, 4, 5, 6]


def test_one_event_longer_than_a_page_is_still_sent(alice, monkeypatch):
    monkeypatch.setattr("sessions.domain.vocabulary.MAX_FEED_PAGE_CHARACTERS", 10)
    append_event("long", START, {"title": "A title longer than ten"}, user=alice)
    append_event("long", BLOCK, {"reason": "another long reason"}, user=alice)
    found, next_after = feed_model.feed(0, 100)
    assert [event.seq for _, event in found] == [1]
    assert next_after == found[0][0]


@pytest.fixture
def other_database_transaction(database_url):
    """A transaction left open, holding a transaction id, in another database of the
    same PostgreSQL server (as a backup, a report or another application's idle session)."""
    dsn = database_url.replace(f"/{connection.settings_dict['NAME']}", "/postgres")
    with psycopg.connect(dsn) as other:
        other.execute("SELECT txid_current()")
        yield other
        other.rollback()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's transactions")
def test_a_transaction_open_in_another_database_does_not_hold_the_feed_back(
    alice, other_database_transaction
):
    append_event("fresh", START, {"title": "fresh"}, user=alice)
    found, cursor = feed_model.feed(0, 100)
    assert [event.session for _, event in found] == ["fresh"]
    assert cursor == found[-1][0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's roles")
def test_the_least_privileged_role_sees_the_writers_transaction_ids(database_url, alice):
    from sessions.store.roles import grants

    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("CREATE ROLE tower_feed_reader NOLOGIN")
        try:
            for statement in grants("tower_feed_reader"):
                admin.execute(statement)
            with psycopg.connect(database_url) as writer, psycopg.connect(database_url) as reader:
                writer.execute("SELECT pg_current_xact_id()")
                reader.execute("SET ROLE tower_feed_reader")
                seen = reader.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()"
                ).fetchone()[0]
                writer.rollback()
                reader.rollback()
        finally:
            admin.execute("DROP OWNED BY tower_feed_reader")
            admin.execute("DROP ROLE tower_feed_reader")
    assert seen == 1


# A long poll (`wait`) ---------------------------------------------------------------


def test_a_waiting_request_is_answered_with_the_event_that_lands_meanwhile(api, alice, token):
    append_event("quiet", START, {"title": "Quiet"}, user=alice)
    after = api("GET", "/api/feed?after=0&limit=0", token=token).json()["next_after"]
    later = threading.Timer(0.5, append_event, ("quiet", BLOCK, {"reason": "a question"}))
    later.kwargs = {"user": alice}
    later.start()
    answer = api("GET", f"/api/feed?after={after}&wait=15&stream=quiet", token=token)
    later.join()
    assert answer.status == 200
    assert [item["type"] for item in answer.json()["items"]] == [BLOCK]


def test_a_wait_that_sees_only_other_streams_events_goes_on_waiting(api, alice, token):
    after = api("GET", "/api/feed?after=0&limit=0", token=token).json()["next_after"]
    later = threading.Timer(0.3, append_event, ("other", START, {"title": "Other"}))
    later.kwargs = {"user": alice}
    later.start()
    answer = api("GET", f"/api/feed?after={after}&wait=1&stream=quiet", token=token).json()
    later.join()
    assert answer["items"] == []
    assert answer["next_after"] > after  # past the other stream's event, not to see it again


def test_a_wait_past_the_most_is_refused(api, token):
    answer = api("GET", "/api/feed?after=0&wait=21", token=token)
    assert answer.status == 400
    assert "wait" in answer.body.decode()


def test_with_every_waiting_place_taken_a_wait_is_answered_at_once(alice):
    taken = [
        feed_model._LONG_POLLS.acquire(blocking=False) for _ in range(feed_model.LONG_POLLS_MOST)
    ]
    try:
        assert all(taken)
        with mock.patch.object(feed_model, "_ENDING") as ending:
            found, _ = feed_model.feed_waiting(0, 10, 15, stream="nobody")
        assert found == [] and not ending.wait.called
    finally:
        for _ in taken:
            feed_model._LONG_POLLS.release()
