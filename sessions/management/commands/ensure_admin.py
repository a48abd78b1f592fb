import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


def boxed(lines: list[str]) -> str:
    """`lines` in a box of their own, so that they stand out of a long terminal log."""
    width = max(len(line) for line in lines)
    rule = "─" * (width + 2)
    return "\n".join([f"┌{rule}┐", *(f"│ {line.ljust(width)} │" for line in lines), f"└{rule}┘"])


class Command(BaseCommand):
    help = "Create a superuser 'admin' with a random password (printed once) if no user exists."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="/", help="where the tower answers, to sign in")

    def handle(self, *args, url, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser("admin", password=password)
        lines = [
            f"Sign in at {url} as admin, with the password {password}",
            "It is shown only this once. To set another one later:",
            "  .venv/bin/python manage.py changepassword admin",
        ]
        self.stdout.write(self.style.SUCCESS(boxed(lines)))
