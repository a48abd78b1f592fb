import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a superuser 'admin' with a random password (printed once) if no user exists."

    def handle(self, *args, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser("admin", password=password)
        self.stdout.write(
            self.style.SUCCESS(
                "Created the first user. Sign in as 'admin' with the password "
                f"{password} (shown only this once)."
            )
        )
