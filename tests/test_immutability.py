"""History cannot be rewritten at any layer: queryset, instance, raw SQL, users."""

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction

from sessions.append import append_event
from sessions.models import Event, ImmutableEventError
from sessions.vocabulary import BLOCK


@pytest.fixture
def history(started, alice):
    append_event(started, BLOCK, {"reason": "waiting"}, user=alice)
    return list(Event.objects.values_list("id", "session", "seq", "type", "actor", "reason"))


def assert_unchanged(history):
    assert list(Event.objects.values_list("id", "session", "seq", "type", "actor", "reason")) == (
        history
    )


def test_queryset_update_raises(history):
    with pytest.raises(ImmutableEventError):
        Event.objects.filter(seq=2).update(reason="rewritten")
    assert_unchanged(history)


def test_queryset_delete_raises(history):
    with pytest.raises(ImmutableEventError):
        Event.objects.all().delete()
    assert_unchanged(history)


def test_bulk_update_raises(history):
    events = list(Event.objects.all())
    for event in events:
        event.reason = "rewritten"
    with pytest.raises(ImmutableEventError):
        Event.objects.bulk_update(events, ["reason"])
    assert_unchanged(history)


def test_saving_an_existing_event_raises(history):
    event = Event.objects.get(seq=2)
    event.reason = "rewritten"
    with pytest.raises(ImmutableEventError):
        event.save()
    assert_unchanged(history)


def test_deleting_an_event_instance_raises(history):
    with pytest.raises(ImmutableEventError):
        Event.objects.get(seq=2).delete()
    assert_unchanged(history)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tower_event SET reason = 'rewritten'",
        "UPDATE tower_event SET seq = seq + 10",
        "DELETE FROM tower_event",
        "DELETE FROM tower_event WHERE seq = 2",
    ],
)
def test_raw_sql_cannot_change_events(history, statement):
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert_unchanged(history)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
def test_raw_truncate_cannot_empty_the_table(history):
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("TRUNCATE tower_event")
    assert_unchanged(history)


def test_raw_sql_can_still_insert(history):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO tower_event (session, seq, type, timestamp, actor) "
            "VALUES ('raw', 1, 'session_start', %s, 'x')",
            ["2026-11-29T10:00:00+00:00"],
        )
    assert Event.objects.filter(session="raw").exists()


def test_deleting_a_user_keeps_their_events(history, alice):
    alice.delete()
    assert_unchanged(history)


def test_renaming_a_user_keeps_the_actor_of_their_events(history, alice):
    alice.username = "alice-renamed"
    alice.save()
    assert_unchanged(history)
    assert set(Event.objects.values_list("actor", flat=True)) == {"alice"}


def test_deleting_users_in_bulk_keeps_events(history):
    User.objects.all().delete()
    assert_unchanged(history)
