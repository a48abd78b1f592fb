from django.core.management.commands import flush
from django.db import connections

from sessions import triggers


class Command(flush.Command):
    """Django's flush, with the event table's triggers lifted while it runs (tests only)."""

    def handle(self, **options):
        connection = connections[options["database"]]
        triggers.remove(connection)
        try:
            super().handle(**options)
        finally:
            triggers.install(connection)
