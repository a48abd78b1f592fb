"""Benchmark 7: each hand-written hot statement against its ORM equivalent, in process.

    python bench/hand_sql.py [sqlite] [postgresql]

A hand-written query keeps its place only where it beats the ORM by more than the
noise: each pair is timed in 5 runs of 500 calls, alternating, on a seeded database
(200 sessions of 20 events); the table gives each side's median and range per call.
"""

import statistics
import time

from common import report, run_per_engine, seed, setup_django

RUNS, CALLS = 5, 500


def per_call_us(function):
    begin = time.perf_counter()
    for _ in range(CALLS):
        function()
    return (time.perf_counter() - begin) * 1e6 / CALLS


def main(engine):
    setup_django(engine)
    seed(open_sessions=200, events_per_open=20)
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.db.models import Max, Q

    from sessions import store
    from sessions.domain.records import EventRecord
    from sessions.models import ApiToken, Event
    from sessions.rules import tokens

    fields = EventRecord._fields
    session = "o7"
    user = User.objects.create_user("bench")
    token = tokens.create_token(user, "bench")[1]
    digest = tokens.digest(token)
    counter = iter(range(10**9))

    def orm_records(queryset):
        return [EventRecord(*row) for row in queryset.values_list(*fields)]

    def orm_ends():
        last = Event.objects.filter(session=session).aggregate(m=Max("seq"))["m"]
        rows = Event.objects.filter(Q(seq=1) | Q(seq=last), session=session).order_by("seq")
        return orm_records(rows)

    def orm_key():
        rows = Event.objects.filter(session=session, actor="x", idempotency_key="k")
        return orm_records(rows)[:1]

    def orm_token():
        return (
            ApiToken.objects.select_related("user")
            .filter(digest=digest, revoked_at__isnull=True, user__is_active=True)
            .first()
            .user
        )

    def insert_with(create):
        def insert():
            n = next(counter)
            with transaction.atomic():
                create(n)

        return insert

    def sql_insert(n):
        record = EventRecord(f"ins-sql-{n}", 1, "session_start", store_now, "b", "t")
        store.insert(record)

    def orm_insert(n):
        Event.objects.create(
            session=f"ins-orm-{n}",
            seq=1,
            type="session_start",
            timestamp=store_now,
            actor="b",
            title="t",
        )

    from django.utils import timezone

    store_now = timezone.now()
    pairs = {
        "a stream's ends (append)": (lambda: store.stream_ends(session), orm_ends),
        "an actor's key (append)": (lambda: store.key_event(session, "x", "k"), orm_key),
        "insert (append)": (insert_with(sql_insert), insert_with(orm_insert)),
        "a whole stream": (
            lambda: store.read_stream(session),
            lambda: orm_records(Event.objects.filter(session=session).order_by("seq")),
        ),
        "token → user": (lambda: tokens.bearer_for_token(token), orm_token),
    }
    rows = []
    for name, (hand, orm) in pairs.items():
        hand(), orm()  # warm up
        samples = {"hand SQL": [], "ORM": []}
        for _ in range(RUNS):
            samples["hand SQL"].append(per_call_us(hand))
            samples["ORM"].append(per_call_us(orm))
        for side, values in samples.items():
            rows.append(
                (
                    engine,
                    name,
                    side,
                    f"{statistics.median(values):.0f}",
                    f"{min(values):.0f}–{max(values):.0f}",
                )
            )
    report(
        f"Hand-written statements against the ORM ({engine}, µs per call)",
        rows,
        ["database", "statement", "side", "median µs", "range µs"],
    )


if __name__ == "__main__":
    run_per_engine(__file__, main)
