from itertools import groupby
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from sessions.jsonl import SUFFIX, encode_log
from sessions.models import Event


class Command(BaseCommand):
    help = (
        "Write one <session-id>.jsonl file per session into --out (all sessions, or the IDs given)."
    )

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", metavar="ID")
        parser.add_argument("--out", required=True, help="the folder to write into")

    def handle(self, *args, ids, out, **options):
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        events = Event.objects.all()
        if ids:
            events = events.filter(session__in=ids)
        written = set()
        for session_id, stream in groupby(events.iter_records(), key=lambda e: e.session):
            (folder / f"{session_id}{SUFFIX}").write_bytes(encode_log(stream).encode("utf-8"))
            written.add(session_id)
        missing = sorted(set(ids) - written)
        self.stdout.write(f"Wrote {len(written)} file(s) to {folder}.")
        if missing:
            raise CommandError(f"No such session(s): {', '.join(missing)}.")
