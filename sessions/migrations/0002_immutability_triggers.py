"""Triggers that refuse UPDATE, DELETE and TRUNCATE on the event table, so that raw SQL
cannot rewrite history either. The SQL lives here, as it was when this migration ran."""

from django.db import migrations

MESSAGE = "events are immutable: history can only be appended to"

CREATE = {
    "sqlite": [
        "CREATE TRIGGER IF NOT EXISTS tower_event_no_update BEFORE UPDATE ON tower_event "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
        "CREATE TRIGGER IF NOT EXISTS tower_event_no_delete BEFORE DELETE ON tower_event "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
    ],
    "postgresql": [
        "CREATE OR REPLACE FUNCTION tower_event_refuse_change() RETURNS trigger "
        f"LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$",
        "CREATE OR REPLACE TRIGGER tower_event_no_change BEFORE UPDATE OR DELETE ON tower_event "
        "FOR EACH ROW EXECUTE FUNCTION tower_event_refuse_change()",
        "CREATE OR REPLACE TRIGGER tower_event_no_truncate BEFORE TRUNCATE ON tower_event "
        "FOR EACH STATEMENT EXECUTE FUNCTION tower_event_refuse_change()",
    ],
}
DROP = {
    "sqlite": [
        "DROP TRIGGER IF EXISTS tower_event_no_update",
        "DROP TRIGGER IF EXISTS tower_event_no_delete",
    ],
    "postgresql": [
        "DROP TRIGGER IF EXISTS tower_event_no_change ON tower_event",
        "DROP TRIGGER IF EXISTS tower_event_no_truncate ON tower_event",
        "DROP FUNCTION IF EXISTS tower_event_refuse_change()",
    ],
}


def run(statements):
    def apply(apps, schema_editor):
        vendor = schema_editor.connection.vendor
        if vendor not in statements:
            raise NotImplementedError(f"No immutability triggers for {vendor}.")
        for statement in statements[vendor]:
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("tower", "0001_initial")]

    operations = [migrations.RunPython(run(CREATE), run(DROP))]
