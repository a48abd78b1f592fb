from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from sessions.rules.tokens import ForgeUserRefused, create_token


class Command(BaseCommand):
    help = "Create an API token acting as USERNAME and print it once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="agent", help="a name to recognise the token by")
        parser.add_argument(
            "--read-only", action="store_true", help="it may read only (GET): no appends"
        )
        parser.add_argument(
            "--expires-days",
            type=int,
            metavar="N",
            help="it stops working N days from now (default: never)",
        )

    def handle(self, *args, username, name, read_only, expires_days, **options):
        if expires_days is not None and not 1 <= expires_days <= 3650:
            raise CommandError("--expires-days must be between 1 and 3650.")
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"There is no user {username!r}.") from None
        try:
            _, token = create_token(user, name, read_only=read_only, expires_in_days=expires_days)
        except ForgeUserRefused as refused:
            raise CommandError(refused.detail) from None
        self.stdout.write(token)
        self.stderr.write(f"Token {name!r} for {username}: shown only this once, store it now.")
