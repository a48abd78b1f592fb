from django.core.management.commands import flush
from django.db import connections

# The event table's triggers, read from the database itself so that the test suite
# needs no copy of the migrations' SQL.
TRIGGERS_SQLITE = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s"


class Command(flush.Command):
    """Django's flush, with the event table's triggers lifted while it runs (tests only)."""

    def handle(self, **options):
        connection = connections[options["database"]]
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(TRIGGERS_SQLITE, ["tower_event"])
                triggers = cursor.fetchall()
                for name, _ in triggers:
                    cursor.execute(f'DROP TRIGGER "{name}"')
            else:
                cursor.execute("ALTER TABLE tower_event DISABLE TRIGGER USER")
        try:
            super().handle(**options)
        finally:
            with connection.cursor() as cursor:
                if connection.vendor == "sqlite":
                    for _, sql in triggers:
                        cursor.execute(sql)
                else:
                    cursor.execute("ALTER TABLE tower_event ENABLE TRIGGER USER")
