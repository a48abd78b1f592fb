import signal
import threading
from dataclasses import fields

from django.core.management.base import BaseCommand, CommandError

from sessions import config
from sessions.webhooks.worker import Pace, deliver_until

# The worker's options whose defaults are settings (controltower/settings.py).
FROM_SETTINGS = {
    "timeout_seconds": "webhook_timeout_seconds",
    "ping_timeout_seconds": "webhook_ping_timeout_seconds",
}


class Command(BaseCommand):
    help = (
        "Deliver the feed to every webhook subscription, by a fixed pool of threads, until "
        "SIGTERM or SIGINT. Run one such process per database (see README, 'Webhooks')."
    )

    def add_arguments(self, parser):
        for option in fields(Pace):
            setting = FROM_SETTINGS.get(option.name)
            parser.add_argument(
                "--" + option.name.replace("_", "-"),
                type=option.type,
                default=None if setting else option.default,
                help=f"default: {setting.upper()}" if setting else f"default {option.default}",
            )

    def handle(self, *args, **options):
        configured = config.current()
        for name, setting in FROM_SETTINGS.items():
            if options[name] is None:
                options[name] = float(getattr(configured, setting))
        pace = Pace(**{option.name: options[option.name] for option in fields(Pace)})
        if min(pace.keep_deliveries, pace.page, pace.threads, pace.ping_threads) < 1:
            raise CommandError(
                "--keep-deliveries, --page, --threads and --ping-threads must be at least 1."
            )
        stopped = threading.Event()
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, lambda *_: stopped.set())
        self.stdout.write(f"Delivering webhooks ({pace}); stop with SIGTERM or Ctrl-C.")
        self.stdout.flush()
        deliver_until(stopped, pace)
