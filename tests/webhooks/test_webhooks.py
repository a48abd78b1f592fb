"""Webhooks: the delivery worker (`manage.py deliver`, a real process) POSTs each new
matching event to a real local receiver, signed, in order, at least once; it retries with
backoff, survives SIGKILL, and a dead endpoint does not hold back a healthy one. The
page where a person manages their webhooks refuses bad input and shows the delivery log."""

import hashlib
import hmac
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from django.db import connection
from django.utils import timezone

from sessions.domain import webhooks as protocol
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import BLOCK, CLOSE, PLAN_CREATE, PROGRESS, START, UNBLOCK
from sessions.models import Delivery, Event, Subscription
from sessions.readmodels import open_sessions
from sessions.rules import subscriptions
from sessions.rules.append import append_event
from sessions.webhooks import payloads, transport
from tests.conftest import ROOT, Deliverer, committing_late
from tests.support.receiver import BlackHole, Receiver

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver():
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def wait_for(done, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return False


def subscribe(user, url, payload=Subscription.EVENT, **filters) -> Subscription:
    return subscriptions.subscribe(user, url, payload, **filters)


def positions_of(*sessions: str) -> list[int]:
    rows = Event.objects.filter(session__in=sessions) if sessions else Event.objects.all()
    return list(rows.order_by("id").values_list("id", flat=True))


def start_and_block(user, session: str, blocks: int) -> None:
    append_event(session, START, {"title": f"Work on {session}"}, user=user)
    for n in range(blocks):
        append_event(session, BLOCK, {"reason": f"reason {n}"}, user=user)


# The worker ------------------------------------------------------------------------------


def test_each_new_event_is_posted_in_order_as_the_feed_gives_it(alice, receiver, deliverer):
    hook = subscribe(alice, receiver.url)
    deliverer()
    start_and_block(alice, "fix-login", 3)
    expected = positions_of()
    assert receiver.wait_until(lambda got: len(got) >= 4)
    time.sleep(0.3)  # nothing more comes
    assert [r.json["position"] for r in receiver.received] == expected
    first = receiver.received[0].json
    assert (first["session"], first["seq"], first["type"], first["title"]) == (
        "fix-login",
        1,
        START,
        "Work on fix-login",
    )
    assert receiver.received[1].headers["X-Tower-Event"] == BLOCK
    assert [r.delivery for r in receiver.received] == [f"{hook.pk}-{p}" for p in expected]


def test_every_body_is_signed_with_the_subscription_secret(alice, receiver, deliverer):
    hook = subscribe(alice, receiver.url)
    deliverer()
    start_and_block(alice, "fix-login", 1)
    assert receiver.wait_until(lambda got: len(got) >= 2)
    assert all(r.signed_by(hook.secret) for r in receiver.received)
    assert not receiver.received[0].signed_by("another secret")


def test_a_delivery_replayed_later_or_with_another_moment_fails_the_check(
    alice, receiver, deliverer
):
    hook = subscribe(alice, receiver.url)
    deliverer()
    start_and_block(alice, "fix-login", 1)
    assert receiver.wait_until(lambda got: len(got) >= 1)
    got = receiver.received[0]
    sent_at = int(got.headers["X-Tower-Timestamp"])
    assert abs(sent_at - got.wall) < 5
    moved = {**got.headers, "X-Tower-Timestamp": str(sent_at + 1)}
    assert not replace(got, headers=moved).signed_by(hook.secret)  # the moment is signed
    assert not got.signed_by(hook.secret, window_seconds=-1)  # too old for the receiver


def test_a_webhook_hears_only_of_events_after_it_was_added(alice, receiver, deliverer):
    start_and_block(alice, "before", 2)
    subscribe(alice, receiver.url)
    deliverer()
    start_and_block(alice, "after", 0)
    assert receiver.wait_until(lambda got: len(got) >= 1)
    time.sleep(0.3)
    assert [r.json["session"] for r in receiver.received] == ["after"]


def test_a_refused_event_is_retried_until_a_2xx_and_nothing_after_it_overtakes_it(alice, deliverer):
    failing = Receiver(answer=lambda n: 503 if n <= 3 else 200)
    try:
        hook = subscribe(alice, failing.url)
        deliverer()
        start_and_block(alice, "fix-login", 1)
        assert failing.wait_until(lambda got: len(got) >= 5)
        time.sleep(0.3)
        first, second = positions_of()
        assert [r.json["position"] for r in failing.received] == [first] * 4 + [second]
        # The same delivery id on every try, so a receiver can drop repeats.
        assert {r.delivery for r in failing.received[:4]} == {f"{hook.pk}-{first}"}
        log = Delivery.objects.get(subscription=hook, position=first)
        assert (log.attempts, log.status, log.error) == (4, 200, "")
        assert log.delivered_at is not None
        assert Subscription.objects.get(pk=hook.pk).cursor == second
    finally:
        failing.close()


def test_the_log_keeps_the_last_failure_of_an_event_not_yet_delivered(alice, deliverer):
    refusing = Receiver(answer=lambda n: 500)
    try:
        hook = subscribe(alice, refusing.url)
        deliverer()
        start_and_block(alice, "fix-login", 0)
        assert refusing.wait_until(lambda got: len(got) >= 3)
        cursor_before = hook.cursor
        log = Delivery.objects.get(subscription=hook)
        assert log.status == 500 and "500" in log.error and log.delivered_at is None
        assert log.attempts >= 2
        assert Subscription.objects.get(pk=hook.pk).cursor == cursor_before
    finally:
        refusing.close()


def killed_at_the_sixth_post(alice, deliverer, *options: str) -> tuple[list, list]:
    """Twelve events to a receiver that holds the sixth POST until the worker delivering
    them is killed (SIGKILL); then another worker: (the events' positions in order, the
    positions received, in the order received)."""
    held, release = threading.Event(), threading.Event()

    def answer(number: int) -> int:
        if number == 6:
            held.set()
            release.wait(timeout=30)
        return 204

    slow = Receiver(answer=answer)
    try:
        subscribe(alice, slow.url)
        start_and_block(alice, "fix-login", 11)
        expected = positions_of()
        first = deliverer(*options)
        assert held.wait(timeout=30)
        first.kill()
        release.set()
        deliverer(*options)
        assert slow.wait_until(lambda got: {r.json["position"] for r in got} >= set(expected))
        time.sleep(0.3)
        return expected, [r.json["position"] for r in slow.received]
    finally:
        release.set()
        slow.close()


def test_a_worker_killed_mid_delivery_and_restarted_skips_nothing_and_keeps_order(alice, deliverer):
    expected, received = killed_at_the_sixth_post(alice, deliverer)
    # The restarted worker resends from its cursor, at or before the held event
    # (at least once), then goes on in order, skipping nothing.
    assert received[:6] == expected[:6]
    resent_from = expected.index(received[6])
    assert resent_from <= 5
    assert received[6:] == expected[resent_from:]


def test_a_killed_worker_resends_at_most_the_page_it_was_delivering(alice, deliverer):
    """README's promise: the bookkeeping is committed once per page, so a worker killed
    mid-page resends that page's events delivered so far, and nothing before them."""
    expected, received = killed_at_the_sixth_post(alice, deliverer, "--page", "4")
    # The sixth POST is the second event of the second page of 4: the page is resent.
    assert received[6:] == expected[4:]


def test_a_dead_endpoint_does_not_delay_a_healthy_one(alice, receiver, deliverer):
    dead = BlackHole()
    try:
        subscribe(alice, dead.url)
        subscribe(alice, receiver.url)
        # Each POST to the dead endpoint waits 30 s for an answer that never comes.
        deliverer("--timeout-seconds", "30")
        start_and_block(alice, "warm-up", 0)
        assert receiver.wait_until(lambda got: len(got) >= 1)  # the worker is up
        started = time.monotonic()  # and stuck on the dead endpoint's first event
        start_and_block(alice, "fix-login", 4)
        assert receiver.wait_until(lambda got: len(got) >= 6, timeout=10)
        assert receiver.received[-1].at - started < 5
    finally:
        dead.close()


def test_a_filtered_webhook_gets_only_its_events_and_its_cursor_passes_the_rest(
    alice, receiver, deliverer
):
    hook = subscribe(alice, receiver.url, event_type=BLOCK, stream="fix-login")
    deliverer()
    start_and_block(alice, "fix-login", 2)
    start_and_block(alice, "docs", 2)
    assert receiver.wait_until(lambda got: len(got) >= 2)
    time.sleep(0.5)
    assert [(r.json["session"], r.json["type"]) for r in receiver.received] == [
        ("fix-login", BLOCK),
        ("fix-login", BLOCK),
    ]
    assert Subscription.objects.get(pk=hook.pk).cursor == positions_of()[-1]


def test_a_slack_webhook_gets_one_text_line_per_event(alice, receiver, deliverer):
    subscribe(alice, receiver.url, Subscription.SLACK)
    deliverer()
    append_event("fix-login", START, {"title": "Fix flaky login test"}, user=alice)
    append_event("fix-login", BLOCK, {"reason": "needs the CI secrets rotated"}, user=alice)
    assert receiver.wait_until(lambda got: len(got) >= 2)
    assert [r.json for r in receiver.received] == [
        {"text": "alice started *Fix flaky login test*"},
        {"text": "alice blocked *Fix flaky login test*: needs the CI secrets rotated"},
    ]


def test_a_removed_webhook_is_sent_nothing_more(alice, receiver, deliverer):
    hook = subscribe(alice, receiver.url)
    deliverer()
    start_and_block(alice, "fix-login", 0)
    assert receiver.wait_until(lambda got: len(got) >= 1)
    subscriptions.remove(hook)
    time.sleep(0.5)  # the worker notices
    start_and_block(alice, "docs", 0)
    time.sleep(0.5)
    assert len(receiver.received) == 1


def test_the_log_keeps_the_newest_events_rows(alice, receiver, deliverer):
    hook = subscribe(alice, receiver.url)
    deliverer("--keep-deliveries", "3")
    start_and_block(alice, "fix-login", 5)
    assert receiver.wait_until(lambda got: len(got) >= 6)
    time.sleep(0.3)
    logged = Delivery.objects.filter(subscription=hook).values_list("position", flat=True)
    assert sorted(logged) == positions_of()[-3:]


def logging_a_delivery(hook):
    """What the worker does to log a delivery to `hook` (run it under `committing_late`)."""

    def log():
        if connection.vendor == "postgresql":
            # Check the foreign key now rather than at commit, so that the log holds the
            # subscription's row from here on: the interleaving where the worker commits
            # between the removal's reading of the log and its commit, every time.
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        now = timezone.now()
        Delivery.objects.create(
            subscription=hook, position=1, delivery_id=f"{hook.pk}-1", last_tried_at=now
        )

    return log


def test_a_webhook_removed_while_a_delivery_is_being_logged_goes_whole(alice):
    hook = subscribe(alice, "https://hooks.example/x")

    def remove():
        try:
            subscriptions.remove(hook)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        with committing_late(logging_a_delivery(hook)):  # the worker's, not yet committed
            removal = pool.submit(remove)
            time.sleep(0.5)
        removal.result(timeout=30)
    assert not Subscription.objects.exists() and not Delivery.objects.exists()


def test_the_worker_stops_cleanly_on_sigterm(database_url):
    worker = Deliverer(database_url)
    worker.process = subprocess.Popen(
        worker.args, cwd=ROOT, env=worker.env, stdout=subprocess.PIPE, text=True
    )
    # Its first line comes once it has taken over SIGTERM.
    assert worker.process.stdout.readline().startswith("Delivering webhooks")
    assert worker.stop() == 0
    worker.process.stdout.close()


def test_the_workers_timeouts_come_from_the_settings(database_url):
    worker = Deliverer(database_url)
    worker.env = {**worker.env, "WEBHOOK_TIMEOUT_SECONDS": "3", "WEBHOOK_PING_TIMEOUT_SECONDS": "2"}
    worker.process = subprocess.Popen(
        worker.args, cwd=ROOT, env=worker.env, stdout=subprocess.PIPE, text=True
    )
    started = worker.process.stdout.readline()
    assert "timeout_seconds=3.0" in started and "ping_timeout_seconds=2.0" in started
    assert worker.stop() == 0
    worker.process.stdout.close()


# What is sent ---------------------------------------------------------------------------


def event(type_, **fields) -> EventRecord:
    return EventRecord("fix-login", 2, type_, None, "agent-7", **fields)


def test_a_slack_line_says_who_did_what_to_which_session_and_why():
    line = payloads.slack_text(
        event(BLOCK, reason="needs the CI secrets rotated"), "Fix flaky login test"
    )
    assert line == "agent-7 blocked *Fix flaky login test*: needs the CI secrets rotated"


def test_a_slack_line_of_a_close_names_its_outcome_and_note():
    line = payloads.slack_text(event(CLOSE, outcome="failed", note="gave up"), "Fix login")
    assert line == "agent-7 closed *Fix login* (failed): gave up"


def test_a_slack_line_escapes_the_characters_slack_reads_as_markup():
    line = payloads.slack_text(event(UNBLOCK, note="<!channel> & co"), "a <b> title")
    assert line == "agent-7 unblocked *a &lt;b&gt; title*: &lt;!channel&gt; &amp; co"


def test_a_slack_line_of_a_reclaim_says_who_took_the_node_from_whom():
    note = "no activity since 2026-11-29T14:02:00.000000Z; node reclaimed by session s9"
    close = EventRecord("s7", 5, CLOSE, None, "agent-9", note=note, outcome="lapsed")
    line = payloads.slack_text(close, "Migrate the schema", "agent-7")
    assert line == "agent-9 took *Migrate the schema* from agent-7 (silent since 14:02)"


def test_a_slack_line_of_a_heartbeat_gives_its_note():
    line = payloads.slack_text(event(PROGRESS, note="tests green"), "Fix login")
    assert line == "agent-7 reported progress on *Fix login*: tests green"


def test_a_slack_line_of_a_plan_names_the_plan():
    line = payloads.slack_text(event(PLAN_CREATE, title="Ship v2"), "Ship v2")
    assert line == "agent-7 made the plan *Ship v2*"


def test_the_signature_is_the_hmac_sha256_of_the_timestamp_and_body_under_the_secret():
    # RFC 4231's test case 2 ("Jefe"), its message split as "<timestamp>.<body>".
    signed = protocol.signature("Jefe", 1700000000, b"what do ya want for nothing?")
    expected = hmac.new(
        b"Jefe", b"1700000000.what do ya want for nothing?", hashlib.sha256
    ).hexdigest()
    assert signed == f"sha256={expected}"


def test_the_same_body_signed_at_another_moment_has_another_signature():
    body = b'{"position": 1}'
    assert protocol.signature("s", 1700000000, body) != protocol.signature("s", 1700000001, body)


def test_a_redirect_is_reported_not_followed():
    moved = Receiver(answer=lambda n: 302)
    try:
        answer = transport.post(moved.url, b"{}", {}, timeout=5)
        assert answer.status == 302 and not answer.delivered
    finally:
        moved.close()


def test_an_unreachable_url_is_an_answer_without_a_status():
    dead = BlackHole()
    url = dead.url
    dead.close()  # nothing listens there any more
    answer = transport.post(url, b"{}", {}, timeout=5)
    assert answer.status is None and "refused" in answer.error.lower()


# The page ---------------------------------------------------------------------------------


@pytest.fixture
def alice_page(client, alice):
    client.force_login(alice)
    return client


def test_a_person_adds_a_webhook_that_starts_at_the_feed_s_end(alice_page, alice):
    start_and_block(alice, "before", 1)
    answer = alice_page.post(
        "/webhooks/", {"url": "https://hooks.example.com/x", "payload": "slack", "plan": "ship"}
    )
    assert answer.status_code == 302
    hook = Subscription.objects.get()
    assert (hook.owner, hook.url, hook.payload, hook.plan, hook.event_type) == (
        alice,
        "https://hooks.example.com/x",
        "slack",
        "ship",
        "",
    )
    assert hook.cursor == open_sessions.safe_position() == positions_of()[-1]
    assert len(hook.secret) == 64


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"url": "ftp://example.com/x"}, "url", "Enter a valid URL."),
        ({"url": "javascript:alert(1)"}, "url", "Enter a valid URL."),
        ({"url": ""}, "url", "This field is required."),
        ({"url": "https://x.example", "stream": "../etc"}, "stream", "An id may hold only"),
        ({"url": "https://x.example", "plan": "a b"}, "plan", "An id may hold only"),
        ({"url": "https://x.example", "event_type": "session_x"}, "event_type", "valid choice"),
    ],
)
def test_a_bad_webhook_is_refused_with_the_form_reshown_and_nothing_written(
    alice_page, fields, field, message
):
    answer = alice_page.post("/webhooks/", {"payload": "event", **fields})
    assert answer.status_code == 400
    assert message in " ".join(answer.context["form"].errors[field])
    assert Subscription.objects.count() == 0


def test_the_page_lists_a_person_s_webhooks_with_their_deliveries(alice_page, alice, bob):
    mine = subscribe(alice, "https://mine.example/hook")
    subscribe(bob, "https://bobs.example/hook")
    Delivery.objects.create(
        subscription=mine,
        position=7,
        delivery_id=f"{mine.pk}-7",
        attempts=3,
        status=503,
        error="answered 503 Service Unavailable",
        last_tried_at=mine.created_at,
    )
    page = alice_page.get("/webhooks/").content.decode()
    assert "https://mine.example/hook" in page and "bobs.example" not in page
    assert f"{mine.pk}-7" in page and "answered 503 Service Unavailable" in page


def test_a_person_deleted_while_a_delivery_is_being_logged_goes_with_their_webhooks(bob):
    hook = subscribe(bob, "https://hooks.example/x")

    def delete_bob():
        try:
            type(bob).objects.get(pk=bob.pk).delete()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        with committing_late(logging_a_delivery(hook)):
            deletion = pool.submit(delete_bob)
            time.sleep(0.5)
        deletion.result(timeout=30)
    assert not Subscription.objects.exists() and not Delivery.objects.exists()


def test_a_superuser_sees_and_removes_everyone_s_webhooks(client, make_user, bob):
    admin = make_user("root", is_superuser=True)
    hook = subscribe(bob, "https://bobs.example/hook")
    client.force_login(admin)
    assert "bobs.example" in client.get("/webhooks/").content.decode()
    assert client.post(f"/webhooks/{hook.pk}/remove").status_code == 302
    assert not Subscription.objects.exists()


@pytest.mark.parametrize("action", ["ping", "remove"])
def test_another_person_s_webhook_is_not_found(alice_page, bob, action):
    hook = subscribe(bob, "https://bobs.example/hook")
    assert alice_page.post(f"/webhooks/{hook.pk}/{action}").status_code == 404
    assert Subscription.objects.filter(pk=hook.pk).exists()
    assert not Delivery.objects.exists()


def test_a_ping_is_asked_for_by_the_page_and_sent_by_the_worker(
    alice_page, alice, receiver, deliverer
):
    hook = subscribe(alice, receiver.url)
    assert alice_page.post(f"/webhooks/{hook.pk}/ping").status_code == 302
    assert receiver.received == []  # the page's request sent nothing
    asked = Delivery.objects.get()
    assert (asked.attempts, asked.status) == (0, None)
    assert "waiting for the worker" in alice_page.get("/webhooks/").content.decode()
    deliverer()
    assert receiver.wait_until(lambda got: len(got) == 1)
    (ping,) = receiver.received
    assert ping.json["type"] == "ping" and ping.json["subscription"] == hook.pk
    assert ping.signed_by(hook.secret) and ping.headers["X-Tower-Event"] == "ping"
    assert wait_for(lambda: Delivery.objects.get().attempts == 1)
    log = Delivery.objects.get()
    assert (log.position, log.status, log.delivery_id) == (None, 204, ping.delivery)


def test_a_ping_to_a_dead_endpoint_logs_why(alice_page, alice, deliverer):
    dead = BlackHole()
    url = dead.url
    dead.close()
    hook = subscribe(alice, url)
    alice_page.post(f"/webhooks/{hook.pk}/ping")
    deliverer()
    assert wait_for(lambda: Delivery.objects.get().attempts == 1)
    log = Delivery.objects.get()
    assert log.status is None and log.delivered_at is None and log.error


def test_twenty_pings_at_a_black_hole_keep_the_board_answering(alice_page, alice, deliverer):
    """No request waits on a remote host: the pages answer as usual while the worker's
    ping threads wait on an endpoint that never answers."""
    hole = BlackHole()
    try:
        hook = subscribe(alice, hole.url)
        deliverer()  # pings wait 5 s on the black hole, four at a time
        began = time.monotonic()
        for _ in range(20):
            assert alice_page.post(f"/webhooks/{hook.pk}/ping").status_code == 302
        assert time.monotonic() - began < 5
        time.sleep(0.5)  # the worker has taken the first pings and waits on them
        began = time.monotonic()
        assert alice_page.get("/").status_code == 200
        assert time.monotonic() - began < 2
        assert Delivery.objects.filter(attempts=0).count() >= 16  # four threads at most
    finally:
        hole.close()


def test_the_webhooks_page_needs_a_signed_in_person(client):
    answer = client.get("/webhooks/")
    assert answer.status_code == 302 and "/login" in answer["Location"]


def test_a_deactivated_owner_s_webhook_stops_at_once(alice, bob, receiver, deliverer):
    hook = subscribe(alice, receiver.url)
    deliverer()
    start_and_block(bob, "before", 0)
    assert receiver.wait_until(lambda got: len(got) >= 1)
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    time.sleep(1.5)  # the worker's next rescan (every second) has come and gone
    start_and_block(bob, "after", 2)
    time.sleep(1.0)
    assert [r.json["session"] for r in receiver.received] == ["before"]
    hook.refresh_from_db()
    assert hook.cursor <= positions_of("before")[-1]


def test_the_webhooks_page_says_a_deactivated_owner_s_webhook_is_stopped(client, alice, make_user):
    subscribe(alice, "https://hooks.example.com/tower")
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    client.force_login(make_user("root", is_superuser=True))
    page = client.get("/webhooks/").content.decode()
    assert "Stopped: its owner, alice, is deactivated, so nothing is sent." in page


def test_a_person_past_the_webhooks_cap_is_refused_clearly(alice_client, alice, settings):
    settings.WEBHOOKS_PER_USER = 2
    for n in range(2):
        subscribe(alice, f"https://hooks.example.com/{n}")
    answer = alice_client.post(
        "/webhooks/", {"url": "https://hooks.example.com/3", "payload": Subscription.EVENT}
    )
    assert answer.status_code == 400
    assert "You have 2 webhooks, the most one person may have" in answer.content.decode()
    assert Subscription.objects.filter(owner=alice).count() == 2


def test_fifty_webhooks_hold_no_more_connections_than_the_worker_has_threads(
    make_user, receiver, deliverer, settings
):
    """The worker's threads and database connections stay bounded whatever the number
    of subscriptions (8 delivery threads and the supervisor, here with 50 webhooks)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL counts its connections; SQLite has none to count")
    settings.WEBHOOKS_PER_USER = 50
    owner = make_user("many-hooks")
    for _ in range(50):
        subscribe(owner, receiver.url)
    deliverer()
    start_and_block(owner, "busy", 3)
    assert receiver.wait_until(lambda got: len(got) >= 50 * 4, timeout=60)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        (held,) = cursor.fetchone()
    assert held <= 8 + 1
