import argparse
import functools
from datetime import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from sessions.domain import moments, plans
from sessions.domain.jsonl import SUFFIX, LogError, decode_log, is_plan_file, shifted
from sessions.domain.vocabulary import IMPORT_FUTURE_LIMIT, PLAN_CREATE
from sessions.readmodels.plan_views import plan_nodes
from sessions.rules.imports import import_stream
from sessions.rules.refusals import StreamMismatch

PROGRESS_EVERY = 100


def log_files(paths):
    for path in map(Path, paths):
        if path.is_dir():
            yield from sorted(path.glob(f"*{SUFFIX}"))
        else:
            yield path


def moment_argument(text: str) -> datetime:
    try:
        return moments.moment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} {exc}") from None


def read_first_line(path):
    try:
        with open(path, "rb") as file:
            return file.readline()
    except OSError:
        return b""  # said when the file is imported


class Command(BaseCommand):
    help = (
        "Import <id>.jsonl files of sessions and plans (or folders of them), plans first; "
        "each file is all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--dry-run", action="store_true", help="validate without writing")
        parser.add_argument(
            "--as-if-now",
            metavar="MOMENT",
            type=moment_argument,
            help="move every event by the time from MOMENT (ISO 8601) to now, as if the "
            "logs were written relative to now (the demo: what is stale or lapsed is meant "
            "to be)",
        )

    def handle(self, *args, paths, dry_run, as_if_now=None, **options):
        self.moved_by = timezone.now() - as_if_now if as_if_now is not None else None
        files = list(log_files(paths))
        counts = {"imported": 0, "unchanged": 0, "valid": 0, "refused": 0}
        # Plans first: a session's start is checked against the plan and node it names.
        files.sort(key=lambda path: not is_plan_file(read_first_line(path)))
        # Each plan's nodes are read once a run, not once per session naming it: every
        # plan file is imported before the first session file, so none changes after.
        self.stored_plan_nodes = functools.cache(plan_nodes)
        # A dry run writes no plan, so the sessions on a plan of this run are checked
        # against the plan its file would have written.
        self.planned = {}
        for number, path in enumerate(files, start=1):
            outcome = self.import_file(path, dry_run)
            counts[outcome] += 1
            if len(files) > PROGRESS_EVERY and number % PROGRESS_EVERY == 0:
                self.stderr.write(f"{number}/{len(files)} files")
        summary = ", ".join(f"{count} {name}" for name, count in counts.items() if count)
        self.stdout.write(f"{len(files)} file(s): {summary or 'nothing to do'}.")
        if counts["refused"]:
            raise CommandError(
                f"{counts['refused']} file(s) refused; nothing was written for them."
            )

    def import_file(self, path, dry_run):
        try:
            latest = timezone.now() + IMPORT_FUTURE_LIMIT
            session_id, records = decode_log(path.name, path.read_bytes(), self.plan_nodes, latest)
            if self.moved_by is not None:
                records = shifted(records, self.moved_by)
            if dry_run:
                if records and records[0].type == PLAN_CREATE:
                    self.planned[session_id] = set(plans.graph_of(records).nodes)
                return "valid"
            moved = self.moved_by is not None
            return "imported" if import_stream(session_id, records, moved) else "unchanged"
        except LogError as exc:
            where = f"{path}:{exc.line}" if exc.line else str(path)
            self.stderr.write(f"{where}: {exc.reason}")
        except StreamMismatch as exc:
            self.stderr.write(f"{path}: {exc.detail}")
        except OSError as exc:
            self.stderr.write(f"{path}: cannot read the file ({exc.strerror})")
        return "refused"

    def plan_nodes(self, plan_id: str) -> set[str] | None:
        if plan_id in self.planned:
            return self.planned[plan_id]
        return self.stored_plan_nodes(plan_id)
