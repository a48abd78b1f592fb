"""The JSONL logs the tests load: the demo as `make demo` loads it, import and export
through the management commands."""

import io
from pathlib import Path

from django.core.management import CommandError, call_command

DEMO = Path(__file__).resolve().parents[2] / "demo"


# The demo's logs were written as if it were this moment; `make demo` moves them to now.
DEMO_WRITTEN_AS_OF = (DEMO / "written-as-of").read_text().strip()


def import_demo_moved_to_now(**options):
    """The demo as `make demo` loads it: moved so that it ends just now."""
    call_command("import_jsonl", "--as-if-now", DEMO_WRITTEN_AS_OF, str(DEMO), **options)


def import_logs(*paths, dry_run=False):
    """Run import_jsonl; returns (error raised or None, what it wrote to stderr)."""
    stderr = io.StringIO()
    try:
        call_command(
            "import_jsonl", *map(str, paths), dry_run=dry_run, stderr=stderr, stdout=io.StringIO()
        )
    except CommandError as exc:
        return exc, stderr.getvalue()
    return None, stderr.getvalue()


def export_logs(folder, *ids):
    call_command("export_jsonl", *ids, out=str(folder), stdout=io.StringIO())
    return {path.name: path.read_bytes() for path in sorted(Path(folder).iterdir())}
