"""Database triggers that refuse UPDATE and DELETE on the event table, so that even raw
SQL cannot rewrite history. Installed by a migration, for SQLite and PostgreSQL."""

TABLE = "tower_event"
MESSAGE = "events are immutable: history can only be appended to"

_CREATE = {
    "sqlite": [
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_update BEFORE UPDATE ON {TABLE} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_delete BEFORE DELETE ON {TABLE} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
    ],
    "postgresql": [
        f"CREATE OR REPLACE FUNCTION {TABLE}_refuse_change() RETURNS trigger "
        f"LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$",
        f"CREATE OR REPLACE TRIGGER {TABLE}_no_change BEFORE UPDATE OR DELETE ON {TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {TABLE}_refuse_change()",
        f"CREATE OR REPLACE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {TABLE}_refuse_change()",
    ],
}
_DROP = {
    "sqlite": [
        f"DROP TRIGGER IF EXISTS {TABLE}_no_update",
        f"DROP TRIGGER IF EXISTS {TABLE}_no_delete",
    ],
    "postgresql": [
        f"DROP TRIGGER IF EXISTS {TABLE}_no_change ON {TABLE}",
        f"DROP TRIGGER IF EXISTS {TABLE}_no_truncate ON {TABLE}",
        f"DROP FUNCTION IF EXISTS {TABLE}_refuse_change()",
    ],
}


def _run(statements, connection):
    if connection.vendor not in statements:
        raise NotImplementedError(f"No immutability triggers for {connection.vendor}.")
    with connection.cursor() as cursor:
        for statement in statements[connection.vendor]:
            cursor.execute(statement)


def install(connection):
    _run(_CREATE, connection)


def remove(connection):
    _run(_DROP, connection)
