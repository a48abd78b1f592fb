"""The grants of the role the app connects as in production (PostgreSQL)."""

from django.db import connection

from sessions.store.database import TABLE


def grants(role: str) -> list[str]:
    """What the app's database role may do: everything on operational tables (users,
    sign-in sessions, tokens, throttling), and on the event table SELECT and INSERT only,
    so that not even the app's own connection can rewrite history."""
    quote = connection.ops.quote_name
    tables = [t for t in connection.introspection.table_names() if t != TABLE]
    return [
        f"GRANT SELECT, INSERT ON {quote(TABLE)} TO {quote(role)}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(map(quote, tables))} TO {quote(role)}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {quote(role)}",
    ]


def has_roles() -> bool:
    """Whether this database has roles to grant to (PostgreSQL does; SQLite has none)."""
    return connection.vendor == "postgresql"
