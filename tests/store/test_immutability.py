"""History cannot be rewritten at any layer: queryset, instance, raw SQL, users."""

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, IntegrityError, connection, transaction

from sessions.domain.vocabulary import BLOCK
from sessions.models import Event, ImmutableEventError
from sessions.rules.append import append_event
from sessions.rules.identity import IdentityInUse


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


def test_deleting_a_user_who_acted_is_refused_so_the_name_stays_theirs(history, alice):
    # (Django deletes without a savepoint of its own: the test gives it one.)
    with pytest.raises(IdentityInUse, match="deactivate"), transaction.atomic():
        alice.delete()
    assert User.objects.filter(username="alice").exists()
    assert_unchanged(history)


def test_a_new_user_cannot_inherit_a_deleted_namesakes_sessions(history, alice):
    # The old `carol` cannot be deleted, so no new `carol` can be made to own her work.
    with pytest.raises(IdentityInUse), transaction.atomic():
        User.objects.filter(username="alice").delete()
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user("alice")


def test_renaming_a_user_who_acted_is_refused(history, alice):
    alice.username = "alice-renamed"
    with pytest.raises(IdentityInUse):
        alice.save()
    assert set(Event.objects.values_list("actor", flat=True)) == {"alice"}


def test_a_user_who_never_acted_may_be_deleted_or_renamed(history, bob):
    bob.username = "robert"
    bob.save()
    bob.delete()
    assert not User.objects.filter(username__in=["bob", "robert"]).exists()


def test_deactivating_a_user_keeps_their_events_and_name(history, alice):
    alice.is_active = False
    alice.save()
    assert_unchanged(history)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's REPLACE conflict resolution")
def test_insert_or_replace_cannot_overwrite_an_event(history):
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT OR REPLACE INTO tower_event (session, seq, type, timestamp, actor, reason)"
            " VALUES ('s1', 2, 'session_block', '2026-11-29 10:00:00', 'mallory', 'forged')"
        )
    assert_unchanged(history)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's REPLACE conflict resolution")
def test_replace_by_id_cannot_overwrite_an_event(history):
    first_id = history[0][0]
    with (
        pytest.raises(DatabaseError, match="immutable"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "REPLACE INTO tower_event (id, session, seq, type, timestamp, actor, title)"
            " VALUES (%s, 'x', 1, 'session_start', '2026-11-29 10:00:00', 'mallory', 'forged')",
            [first_id],
        )
    assert_unchanged(history)


@pytest.fixture
def app_role(db):
    """The production app role of the README, made in the test's transaction."""
    from sessions.store.roles import grants

    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE tower_app_test NOLOGIN")
        for statement in grants("tower_app_test"):
            cursor.execute(statement)
    return "tower_app_test"


def as_role(role, statement):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL ROLE {role}")
        cursor.execute(statement)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="database roles are PostgreSQL's")
@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM tower_event",
        "UPDATE tower_event SET reason = 'x'",
        "TRUNCATE tower_event",
        "SET session_replication_role = replica",
        "ALTER TABLE tower_event DISABLE TRIGGER USER",
    ],
)
def test_the_app_role_cannot_rewrite_or_unguard_history(history, app_role, statement):
    with pytest.raises(DatabaseError, match=r"permission denied|must be owner"):
        as_role(app_role, statement)
    assert_unchanged(history)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="database roles are PostgreSQL's")
def test_the_app_role_may_read_and_append(history, app_role, alice):
    as_role(app_role, "SELECT count(*) FROM tower_event")
    as_role(
        app_role,
        "INSERT INTO tower_event (session, seq, type, timestamp, actor)"
        " VALUES ('r', 1, 'session_start', now(), 'alice')",
    )
    assert Event.objects.filter(session="r").exists()
