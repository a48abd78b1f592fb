"""ct — Control Tower from the command line.

Each acting subcommand appends one event to a session through the tower's API; each
reading one prints what the tower derives. One line for a person, or the API's JSON with
--json. Exit status: 0 done, 1 refused (the API's code and sentence on stderr), 2 usage,
3 not signed in or not allowed, 4 tower unreachable, 5 a wait that timed out."""

import argparse
import getpass
import importlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ct import (
    agent_names,
    dispatch,  # noqa: F401 (its command declares itself)
    environment,
    files,
    following,  # noqa: F401 (its commands declare themselves)
    gitfacts,
    hook_settings,
    spooling,
)
from ct.client import (
    DONE,
    NOT_ALLOWED,
    UNREACHABLE,
    USAGE,
    NotSignedIn,
    Refused,
    Tower,
    Unreachable,
    new_key,
    save_login,
)
from ct.commands import (
    BARE,
    READING,
    Failed,
    command,
    parser,
    say,
    session_of,
    split_trailing,
)
from ct.hook_modules import HOOK_MODULES
from ct.lines import attempt_lines, brief_lines, session_line

OUTCOMES = ("done", "failed", "abandoned", "released")


# Commands ---------------------------------------------------------------------------


def append(args: argparse.Namespace, tower: Tower, session: str, body: dict) -> dict:
    """Append to `session` under the command's idempotency key (made if not given)."""
    if args.expected_seq is not None:
        body["expected_seq"] = args.expected_seq
    body = agent_names.with_given(body)
    key = args.idempotency_key or new_key()
    answer = tower.request("POST", f"/sessions/{session}/events", body=body, key=key)
    files.remember(session, answer)
    if body["type"] in ("session_block", "session_unblock"):  # a question, or its end
        files.await_answer(session, body["type"] == "session_block")
    return answer


def acting(
    event_type: str, field: str | None = None, verb: str = ""
) -> Callable[[argparse.Namespace, Tower], None]:
    def run(args: argparse.Namespace, tower: Tower) -> None:
        body: dict = {"type": event_type}
        text = getattr(args, "text", None)
        if field and text:
            body[field] = text
        if getattr(args, "outcome", None):
            body["outcome"] = args.outcome
        answer = append(args, tower, session_of(args), body)
        say(args, answer, f"{verb} {session_line(answer['session'])}")

    return run


def _start_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("title", nargs="?", help="what the session is about")
    parser.add_argument("--id", help="the session's id (default: one the tower makes)")
    parser.add_argument("--note", help="the first next action")
    parser.add_argument("--plan", help="work on a node of this plan (with --node)")
    parser.add_argument("--node", help="the node's key (with --plan)")


@command("start", "Start a session (and print its id).", _start_flags)
def cmd_start(args: argparse.Namespace, tower: Tower) -> None:
    if bool(args.plan) != bool(args.node):
        raise Failed("--plan and --node go together", USAGE)
    body = {"title": args.title, "id": args.id, "note": args.note, "plan": args.plan}
    body["node"] = args.node
    body = {name: value for name, value in body.items() if value is not None}
    key = args.idempotency_key or new_key()
    view = tower.request("POST", "/sessions", body=agent_names.with_given(body), key=key)
    files.remember(view["id"], view)
    say(args, view, f"started {session_line(view)}\nexport CT_SESSION={view['id']}")


def _text(
    label: str, help_text: str, optional: bool = True
) -> Callable[[argparse.ArgumentParser], None]:
    def flags(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("text", metavar=label, nargs="?" if optional else None, help=help_text)

    return flags


def _close_flags(parser: argparse.ArgumentParser) -> None:
    _text("NOTE", "the last word (optional)")(parser)
    parser.add_argument("--outcome", choices=OUTCOMES, help="how it ended (default: done)")


for _name, _event_type, _field, _verb, _summary, _flags in (
    (
        "block",
        "session_block",
        "reason",
        "blocked",
        "Block: wait on a person.",
        _text("REASON", "what you need, as a person will read it", optional=False),
    ),
    (
        "unblock",
        "session_unblock",
        "note",
        "unblock:",
        "Unblock, with what unblocked it.",
        _text("NOTE", "a note (optional)"),
    ),
    (
        "review",
        "session_review",
        "note",
        "review:",
        "Hand the work over for review.",
        _text("NOTE", "a note (optional)"),
    ),
    (
        "progress",
        "session_progress",
        "note",
        "progress:",
        "Heartbeat: still at it, with an optional note.",
        _text("NOTE", "a note (optional)"),
    ),
    ("close", "session_close", "note", "closed", "Close the session.", _close_flags),
):
    command(_name, _summary, _flags)(acting(_event_type, _field, _verb))


def _message_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="SESSION")
    parser.add_argument("note", metavar="NOTE")


@command("message", "Write to whoever works a session.", _message_flags)
def cmd_message(args: argparse.Namespace, tower: Tower) -> None:
    answer = append(args, tower, args.target, {"type": "session_message", "note": args.note})
    say(args, answer, f"sent to {session_line(answer['session'])}")


def _target_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="SESSION", nargs="?")


@command("show", "A session's view.", _target_flags, shared=READING)
def cmd_show(args: argparse.Namespace, tower: Tower) -> None:
    view = tower.request("GET", f"/sessions/{args.target or session_of(args)}")
    lines = [session_line(view)]
    lines += [f"  blocked: {b['reason']}" for b in view.get("blockers", [])]
    if view.get("progress"):
        lines.append(f"  progress: {view['progress']['note']}")
    lines += [f"  message from {m['actor']}: {m['note']}" for m in view.get("messages", [])]
    say(args, view, "\n".join(lines))


def _ls_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", choices=("active", "blocked", "in_review", "closed"))
    parser.add_argument("--owner", help="only this user's sessions")
    parser.add_argument(
        "--mine", action="store_true", help="only the sessions of this token's user"
    )
    parser.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")


@command("ls", "List sessions, newest activity first.", _ls_flags, shared=READING)
def cmd_ls(args: argparse.Namespace, tower: Tower) -> None:
    owner = args.owner
    if args.mine:
        owner = tower.request("GET", "/me")["username"]
    query = {"status": args.status, "owner": owner, "page_size": args.limit}
    found = tower.request("GET", "/sessions", query=query)
    lines = [session_line(view) for view in found["items"]] or ["no sessions"]
    say(args, found, "\n".join(lines))


def _plan_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="PLAN")


@command("plan", "A plan's nodes and their states.", _plan_flags, shared=READING)
def cmd_plan(args: argparse.Namespace, tower: Tower) -> None:
    plan = tower.request("GET", f"/plans/{args.plan}")
    done, total = plan["progress"]["done"], plan["progress"]["total"]
    lines = [f"{plan['id']} · {plan['status']} · {plan.get('title') or ''} · {done}/{total} done"]
    # What a claim takes first comes first (ready and reclaimable, in claim order), then
    # the rest in plan order.
    claimable = plan.get("claimable", plan["ready"])
    rank = {key: place for place, key in enumerate(claimable)}
    for node in sorted(plan["nodes"], key=lambda n: rank.get(n["key"], len(rank))):
        held = f" ({node['session']})" if node.get("session") else ""
        lines.append(f"  {node['state']:<9} {node['key']}{held}  {node['title']}")
    if claimable:
        lines.append("ct claim takes, in order: " + ", ".join(claimable))
    else:
        lines.append("nothing to claim")
    say(args, plan, "\n".join(lines))


@command("claim", "Claim a plan's next node, with its handoff.", _plan_flags)
def cmd_claim(args: argparse.Namespace, tower: Tower) -> None:
    key = args.idempotency_key or new_key()
    body = agent_names.with_given({})
    claimed = tower.request("POST", f"/plans/{args.plan}/claim", body=body, key=key)
    files.remember(claimed["id"], claimed)
    lines = [
        f"claimed {claimed['node']} of {claimed['plan']}: {claimed.get('title') or ''}",
        f"session {claimed['id']}",
        *attempt_lines(claimed.get("last_attempt")),
        *brief_lines(claimed.get("brief")),
        f"export CT_SESSION={claimed['id']}",
    ]
    say(args, claimed, "\n".join(lines))


def _work_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="R", help="owner/name")
    parser.add_argument("--branch", metavar="B", help="the branch, without refs/heads/")
    parser.add_argument("--commit", metavar="C", help="the head commit's full id")
    parser.add_argument("--pr", type=int, metavar="N", help="the pull request's number")
    parser.add_argument("--pr-url", metavar="U", help="the pull request's page")
    parser.add_argument("--pr-state", choices=("open", "merged", "closed"))


@command(
    "work", "Say where the work lands (default: this checkout's repo, branch, head).", _work_flags
)
def cmd_work(args: argparse.Namespace, tower: Tower) -> None:
    given = {
        "repo": args.repo,
        "branch": args.branch,
        "commit": args.commit,
        "pr": args.pr,
        "pr_url": args.pr_url,
        "pr_state": args.pr_state,
    }
    body = {name: value for name, value in given.items() if value is not None}
    if not body:
        found = gitfacts.facts(Path.cwd())
        body = found.report() if found is not None else {}
    if not body:
        raise Failed(
            "nothing to report: give --repo, --branch, --commit or --pr, or run it in a"
            " git checkout",
            USAGE,
        )
    answer = append(args, tower, session_of(args), {"type": "session_work", **body})
    say(args, answer, f"reported {session_line(answer['session'])}")


def _reservations_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="R", help="owner/name (default: this checkout's)")
    parser.add_argument("--path", metavar="P", help="only who holds this path (repo-relative)")


@command(
    "reservations",
    "Who holds which paths in a repository: the running nodes' path patterns.",
    _reservations_flags,
    shared=READING,
)
def cmd_reservations(args: argparse.Namespace, tower: Tower) -> None:
    found = gitfacts.facts(Path.cwd())
    repo = args.repo or (found.repo if found is not None else None)
    if not repo:
        raise Failed("which repository? give --repo owner/name, or run it in a checkout", USAGE)
    answer = tower.request("GET", "/reservations", query={"repo": repo, "path": args.path})
    lines = [
        f"{item['plan']}/{item['node']} ({item['session']}, {item['owner']}): "
        + ", ".join(item["paths"])
        for item in answer["items"]
    ]
    say(args, answer, "\n".join(lines) or f"nothing reserved in {repo}")


def _login_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the tower's root, e.g. http://127.0.0.1:8000")
    parser.add_argument("token", metavar="TOKEN", nargs="?", help="asked for when left out")


@command("login", "Save the tower's URL and a token.", _login_flags, shared=READING, offline=True)
def cmd_login(args: argparse.Namespace, _: Tower | None) -> None:
    token = args.token or environment.tower_token()
    if not token:
        token = getpass.getpass("API token (from the tower's Tokens page): ").strip()
    tower = Tower(args.url, token)
    who = tower.request("GET", "/me")
    path = save_login(args.url, token)
    say(args, who, f"signed in to {tower.url} as {who['username']} (saved in {path})")


def _hook_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=tuple(HOOK_MODULES))


@command(
    "hook",
    "Run as a coding agent's hook (reads its JSON on stdin).",
    _hook_flags,
    shared=BARE,
    offline=True,
)
def cmd_hook(args: argparse.Namespace, _: Tower | None) -> None:
    adapter = importlib.import_module(HOOK_MODULES[args.agent])
    sys.exit(adapter.hook(sys.stdin, sys.stdout))


def _hooks_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=tuple(hook_settings.PLACES))
    parser.add_argument("--install", action="store_true", help="merge them into the settings file")
    parser.add_argument(
        "--shared",
        action="store_true",
        help="for the whole team: into the project's settings (the file teams commit: "
        "Claude Code's .claude/settings.json, Codex's .codex/hooks.json, Gemini CLI's "
        ".gemini/settings.json, OpenCode's .opencode/plugins/), running `ct` from the PATH "
        "so that it works on every teammate's machine",
    )
    parser.add_argument(
        "--settings",
        help="the settings file --install merges into (default: yours alone, e.g. "
        ".claude/settings.local.json, ~/.codex/hooks.json, ~/.gemini/settings.json)",
    )


@command(
    "hooks",
    "Print (or --install) an agent's hook settings.",
    _hooks_flags,
    shared=BARE,
    offline=True,
)
def cmd_hooks(args: argparse.Namespace, _: Tower | None) -> None:
    agent, shared = args.agent, args.shared
    if not args.install:
        print(hook_settings.rendered(agent, shared))
        return
    settings = Path(args.settings) if args.settings else None
    path = hook_settings.install_for(agent, shared, settings)
    print(f"Control Tower's hooks are in {path}")
    place = hook_settings.PLACES[agent]
    if place.ignored and not shared and settings is None:
        exclude = hook_settings.keep_out_of_git(path)
        if exclude is not None:
            print(f"{path} is yours alone: named in {exclude}, so git leaves it out")
    print(place.trust)


# How long any command spends sending what the spool holds before its own request.
SPOOL_FIRST_SECONDS = 5.0


def send_spool_first(tower: Tower) -> None:
    """Every command that reaches the tower sends the spool first, in order: what the
    hooks could not send goes before anything newer."""
    spool = files.Spool()
    if spool.pending():
        spooling.flush(tower, spool, time.monotonic() + SPOOL_FIRST_SECONDS)


def main(argv: list[str] | None = None) -> int:
    words, trailing = split_trailing(sys.argv[1:] if argv is None else argv)
    args = parser(__doc__.split("\n\n")[0]).parse_args(words)
    args.trailing = trailing
    try:
        declared = args.command_of
        tower = None if declared.offline else Tower.configured()
        if tower is not None:
            send_spool_first(tower)
        declared.run(args, tower)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
    except BrokenPipeError:
        # The reader went away (`ct ls | head`): nothing more to say, and no traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return DONE
    except Refused as refusal:
        print(f"ct: {refusal.code}: {refusal.detail}", file=sys.stderr)
        return refusal.exit_status
    except Unreachable as error:
        print(f"ct: {error}", file=sys.stderr)
        return UNREACHABLE
    except NotSignedIn as error:
        print(f"ct: {error}", file=sys.stderr)
        return NOT_ALLOWED
    except Failed as failure:
        print(f"ct: {failure}", file=sys.stderr)
        return failure.status
    except KeyboardInterrupt:
        return 130
    return DONE


if __name__ == "__main__":
    sys.exit(main())
