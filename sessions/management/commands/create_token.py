from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from sessions.rules.tokens import create_token


class Command(BaseCommand):
    help = "Create an API token acting as USERNAME and print it once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="agent", help="a name to recognise the token by")

    def handle(self, *args, username, name, **options):
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"There is no user {username!r}.") from None
        _, token = create_token(user, name)
        self.stdout.write(token)
        self.stderr.write(f"Token {name!r} for {username}: shown only this once, store it now.")
