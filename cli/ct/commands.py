"""How `ct`'s subcommands are declared: each with its own flags beside the function that
runs it (`command`), as `gh` pairs an options struct with its command; `parser` builds
the command line from every declared one."""

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass

from ct import environment
from ct.client import USAGE, Tower

# The flags a command shares with others: none, the reading ones (--json, --session),
# or the acting ones (those and --expected-seq, --idempotency-key).
BARE, READING, ACTING = "bare", "reading", "acting"


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    run: Callable[[argparse.Namespace, Tower | None], None]
    flags: Callable[[argparse.ArgumentParser], None]
    shared: str = ACTING
    offline: bool = False  # runs with no tower configured
    trailing: bool = False  # takes a command of its own after `--` (`args.trailing`)


COMMANDS: list[Command] = []


class Failed(Exception):
    """A command that cannot go on: what to print and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def say(args: argparse.Namespace, answer: dict, line: str) -> None:
    print(json.dumps(answer, indent=2) if args.json else line)


def session_of(args: argparse.Namespace) -> str:
    session = getattr(args, "session", None) or environment.session()
    if not session:
        raise Failed("which session? give --session ID or set CT_SESSION", USAGE)
    return session


def no_flags(parser: argparse.ArgumentParser) -> None:
    pass


def command(
    name: str,
    summary: str,
    flags: Callable[[argparse.ArgumentParser], None] = no_flags,
    *,
    shared: str = ACTING,
    offline: bool = False,
    trailing: bool = False,
) -> Callable:
    """Declare the function below as the `name` subcommand, with its own `flags`."""

    def declare(run: Callable) -> Callable:
        COMMANDS.append(Command(name, summary, run, flags, shared, offline, trailing))
        return run

    return declare


def split_trailing(argv: list[str]) -> tuple[list[str], list[str]]:
    """A command line's own words, and the command a `trailing` subcommand was given after
    `--` (argparse cannot take both a positional and a command of any words after it)."""
    takes = {declared.name for declared in COMMANDS if declared.trailing}
    if argv[:1] and argv[0] in takes and "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, []


# The parser -------------------------------------------------------------------------


def parser(description: str) -> argparse.ArgumentParser:
    reading = argparse.ArgumentParser(add_help=False)
    reading.add_argument("--json", action="store_true", help="print the API's JSON answer")
    reading.add_argument(
        "--session", metavar="ID", help="the session to act on (default: $CT_SESSION)"
    )
    acting_flags = argparse.ArgumentParser(add_help=False, parents=[reading])
    acting_flags.add_argument(
        "--expected-seq",
        type=int,
        metavar="N",
        help="refuse (conflict) unless the session's last event is still number N",
    )
    acting_flags.add_argument(
        "--idempotency-key",
        metavar="K",
        help="a retry with the same key appends nothing and gets the first answer",
    )
    shared = {BARE: [], READING: [reading], ACTING: [acting_flags]}
    top = argparse.ArgumentParser(
        prog="ct",
        description=description,
        epilog=(
            "The tower: $CT_URL (its root, e.g. http://127.0.0.1:8000) and $CT_TOKEN, or "
            "what `ct login` saved. The session: --session, else $CT_SESSION. Exit status: "
            "0 done, 1 refused, 2 usage, 3 not signed in or not allowed, 4 tower "
            "unreachable, 5 a wait that timed out."
        ),
    )
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for declared in COMMANDS:
        sub = commands.add_parser(
            declared.name,
            help=declared.summary,
            description=declared.summary,
            parents=shared[declared.shared],
        )
        declared.flags(sub)
        sub.set_defaults(command_of=declared)
    return top
