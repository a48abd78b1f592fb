from django.core.management.base import BaseCommand, CommandError

from sessions.store import roles


class Command(BaseCommand):
    help = (
        "Print the GRANT statements for the role the app connects as in production "
        "(PostgreSQL): run them as the owner role that runs migrations."
    )

    def add_arguments(self, parser):
        parser.add_argument("role")

    def handle(self, *args, role, **options):
        if not roles.has_roles():
            raise CommandError("Database roles are PostgreSQL's; SQLite has none.")
        for statement in roles.grants(role):
            self.stdout.write(f"{statement};")
