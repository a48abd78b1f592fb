import os
import tempfile
from itertools import groupby
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from sessions import store
from sessions.domain.jsonl import SUFFIX, encode_log


def write_atomically(folder: Path, name: str, data: bytes) -> None:
    """Write `folder/name` whole or not at all: a temporary file in the same folder,
    renamed over the target. A symlink at the target is replaced, never written through."""
    target = folder / name
    if target.is_dir() and not target.is_symlink():
        raise CommandError(f"{target} is a folder; move it out of the way to export {name}.")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Command(BaseCommand):
    help = (
        "Write one <session-id>.jsonl file per session into --out (all sessions, or the IDs given)."
    )

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", metavar="ID")
        parser.add_argument("--out", required=True, help="the folder to write into")

    def handle(self, *args, ids, out, **options):
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise CommandError(f"--out {folder} is a file, not a folder.")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"Cannot make the folder {folder}: {exc.strerror}.") from None
        written = set()
        for session_id, stream in groupby(store.every_stream(ids), key=lambda e: e.session):
            data = encode_log(stream).encode("utf-8")
            try:
                write_atomically(folder, f"{session_id}{SUFFIX}", data)
            except OSError as exc:
                raise CommandError(f"Cannot write {session_id}{SUFFIX}: {exc.strerror}.") from None
            written.add(session_id)
        missing = sorted(set(ids) - written)
        self.stdout.write(f"Wrote {len(written)} file(s) to {folder}.")
        if missing:
            raise CommandError(f"No such session(s): {', '.join(missing)}.")
