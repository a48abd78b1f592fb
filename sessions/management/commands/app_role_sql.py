from django.core.management.base import BaseCommand, CommandError
from django.db import connection

EVENTS = "tower_event"


def grants(role: str) -> list[str]:
    """What the app's database role may do: everything on operational tables (users,
    sign-in sessions, tokens, throttling), and on the event table SELECT and INSERT only,
    so that not even the app's own connection can rewrite history."""
    quote = connection.ops.quote_name
    tables = [t for t in connection.introspection.table_names() if t != EVENTS]
    statements = [
        f"GRANT SELECT, INSERT ON {quote(EVENTS)} TO {quote(role)}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(map(quote, tables))} TO {quote(role)}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {quote(role)}",
    ]
    return statements


class Command(BaseCommand):
    help = (
        "Print the GRANT statements for the role the app connects as in production "
        "(PostgreSQL): run them as the owner role that runs migrations."
    )

    def add_arguments(self, parser):
        parser.add_argument("role")

    def handle(self, *args, role, **options):
        if connection.vendor != "postgresql":
            raise CommandError("Database roles are PostgreSQL's; SQLite has none.")
        for statement in grants(role):
            self.stdout.write(f"{statement};")
