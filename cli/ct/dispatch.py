"""`ct dispatch PLAN -- COMMAND …` (docs/rules.md, "Running the plan"): claim the plan's ready
nodes, run an agent for each in a git worktree of its own, and keep every process honest
to the stream.

It is only a client of the tower's rules: the atomic claim decides who runs what, so any
number of dispatchers may run one plan. One loop, one thread: each tick it looks at every
run (its process ended? its session closed by someone else? past its time? a heartbeat
due?), then claims while a slot is free. Nothing of a run outlives its session: its
process group is ended and its worktree removed (the branch kept).

With no command, `--agent claude-code|codex|gemini|opencode` runs that agent headless
with `ct`'s hooks given by the dispatcher (`ct.agent_commands`); its hooks adopt the
claimed session (`CT_DISPATCHED`). A run that ends blocked is parked, and resumed with a
person's answer. Idle, it waits on the plan's feed (a long poll) and claims again as soon
as the plan moves."""

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ct import agent_names, environment, files, gitfacts, processes, run_logs, workspace
from ct.agent_commands import AGENTS, RESUME, Headless, filled, given_command
from ct.client import REFUSED, USAGE, Refused, Tower, Unreachable, new_key
from ct.commands import BARE, Failed, command
from ct.plan_feed import Interrupted, PlanFeed
from ct.text import clean

TICK_SECONDS = 0.5  # how often each run is looked at: a close fences it within 2 s
HEARTBEAT_MOST_SECONDS = 300  # a run's heartbeat at least this often, or a third of the lease
NOTE_MAX = 200
APPEND_TRIES = 5


def _flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", help="the plan to run")
    parser.add_argument("--agents", type=int, default=1, metavar="N", help="runs at once (1-64)")
    parser.add_argument("--repo", type=Path, help="the git checkout (default: the one here)")
    parser.add_argument("--base", help="where new branches start (default: the checkout's HEAD)")
    parser.add_argument("--push", action="store_true", help="push each finished branch to origin")
    parser.add_argument("--once", action="store_true", help="stop when nothing is left to run")
    parser.add_argument(
        "--run-timeout", type=float, default=60, metavar="MINUTES", help="end a run past this"
    )
    parser.add_argument(
        "--agent",
        choices=tuple(AGENTS),
        default="claude-code",
        help="the agent to run, when no command follows -- (default claude-code)",
    )
    parser.epilog = "The agent's command follows --: ct dispatch PLAN [flags] -- COMMAND …"


@command(
    "dispatch",
    "Run a plan: claim its nodes and run an agent for each.",
    _flags,
    shared=BARE,
    trailing=True,
)
def cmd_dispatch(args: argparse.Namespace, tower: Tower) -> None:
    agent = given_command(args.trailing) if args.trailing else AGENTS[args.agent]()
    if not agent.words:
        raise Failed("give the agent's command after --: ct dispatch PLAN -- COMMAND …", USAGE)
    if shutil.which(agent.words[0]) is None:
        raise Failed(f"{agent.words[0]} is not on PATH: install it, or give -- COMMAND", USAGE)
    if not 1 <= args.agents <= 64:
        raise Failed("--agents must be from 1 to 64", USAGE)
    if not args.run_timeout > 0:
        raise Failed("--run-timeout must be more than 0 minutes", USAGE)
    repo = workspace.repository_root((args.repo or Path.cwd()).resolve())
    if repo is None:
        raise Failed(f"{args.repo or Path.cwd()} is not in a git checkout: give --repo", USAGE)
    base = args.base or "HEAD"
    found = workspace.git(repo, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    if found.returncode != 0:
        raise Failed(f"--base {base} names no commit in {repo}", USAGE)
    try:
        plan = tower.request("GET", f"/plans/{args.plan}")
    except Refused as refused:
        raise Failed(f"no plan {args.plan!r} ({refused.detail})", REFUSED) from None
    dispatcher = Dispatcher(tower, args, agent, repo, found.stdout.strip(), plan)
    raise SystemExit(dispatcher.run())


class Run:
    """One node's agent: its session, worktree, process and log. A run that ended with
    its session blocked is parked: no process, its worktree kept, until a person's answer
    resumes it."""

    def __init__(self, claimed: dict, space: workspace.Workspace, process: subprocess.Popen | None):
        self.claimed, self.space, self.process = claimed, space, process
        self.session: str = claimed["id"]
        self.log = workspace.runs_home() / f"{self.session}.log"
        self.began = self.beat = time.monotonic()
        self.reported: dict = {}  # the work last reported (repo, branch, commit)

    @property
    def running(self) -> subprocess.Popen:
        """Its process: every run watched (not parked) has one."""
        if self.process is None:
            raise LookupError(f"{self.session} is parked: it has no process")
        return self.process


class Dispatcher:
    def __init__(
        self,
        tower: Tower,
        args: argparse.Namespace,
        agent: Headless,
        repo: Path,
        base: str,
        plan: dict,
    ) -> None:
        self.tower, self.args, self.agent, self.repo, self.base = tower, args, agent, repo, base
        self.plan = plan
        # Named in the first heartbeat's note, which the plan page reads back.
        self.agent_name = Path(agent.words[0]).name if args.trailing else args.agent
        # What its events say wrote them: the program and version (docs/rules.md,
        # "Vocabulary"), also given to the agent as CT_AGENT, so that its hooks and its `ct`
        # say the same.
        self.agent_label = agent_names.label(self.agent_name)
        self.runs: dict[str, Run] = {}
        self.parked: dict[str, Run] = {}
        self.orphans: dict[str, dict] = {}  # an earlier dispatcher's open runs, by session
        self.plan_feed = PlanFeed(tower, args.plan)  # idle, waited on until the plan moves
        self.stopping = False
        self.record = files.state_file("dispatch", args.plan)
        lease = plan.get("lease")
        self.heartbeat_every = min(HEARTBEAT_MOST_SECONDS, lease * 60 / 3 if lease else 1e9)

    # The loop -------------------------------------------------------------------------

    def run(self) -> int:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._stop)
        self.clean_leftovers()
        try:
            while not self.stopping:
                for run in list(self.runs.values()):
                    self.watch(run)
                for run in list(self.parked.values()):
                    self.watch_parked(run)
                self.watch_orphans()
                if self.stopping:
                    break
                free = len(self.runs) < self.args.agents
                if free and self.plan_feed.worth_claiming() and self.claim_one():
                    continue
                if self.args.once and not (self.runs or self.parked or self.orphans_run()):
                    break
                self.pause()
        finally:
            self.release_all()
        return self.summary() if self.args.once else 0

    def orphans_run(self) -> bool:
        """Whether an orphan's process still runs: `--once` waits for its session's end."""
        return any(_still_runs(entry) for entry in self.orphans.values())

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True
        if self.plan_feed.polling:
            raise Interrupted  # out of a long poll at once

    # Claims and launches ----------------------------------------------------------------

    def claim_one(self) -> bool:
        """Claim the next node and launch its agent; False when nothing is ready."""
        self.plan_feed.before_claim()
        try:
            claimed = self.tower.request(
                "POST",
                f"/plans/{self.args.plan}/claim",
                body={"agent": self.agent_label},
                key=new_key(),
            )
        except Refused as refused:
            if refused.code in ("nothing_ready", "budget_spent"):
                self.plan_feed.go_idle()
                return False
            raise
        except Unreachable:
            return False  # the tower is away: looked at again next tick
        self.watch_orphans()  # a reclaimed orphan ended before its worktree goes
        last = claimed.get("last_attempt") or {}
        last_branch = (last.get("work") or {}).get("branch")
        try:
            space = workspace.make(
                self.repo, self.args.plan, claimed["node"], claimed["id"], self.base, last_branch
            )
        except workspace.WorkspaceError as error:
            self.close(claimed["id"], "failed", f"no worktree could be made: {error}")
            return True
        self.launch(claimed, space)
        return True

    def launch(self, claimed: dict, space: workspace.Workspace, answer: str | None = None) -> None:
        """The agent started in `space` on the claimed node; given a person's `answer`,
        resumed: its own conversation with the answer as the prompt where it can, else
        started again with the answer added to what it was given."""
        home = workspace.runs_home()
        given = home / f"{claimed['id']}.prompt"  # what it was first given, kept
        resume: list[str] = []
        if answer is None:
            text = workspace.prompt(
                claimed, self.plan.get("title"), self.plan.get("done_when", "close")
            )
            files.write_private(given, text)
        else:
            text = workspace.answered(given.read_text(), answer)
            conversation = self.agent.resume(home / f"{claimed['id']}.log")
            if RESUME in self.agent.words and conversation is not None:
                text, resume = answer, conversation
        brief = home / f"{claimed['id']}.input"  # this run's prompt: stdin, $CT_BRIEF_FILE
        files.write_private(brief, text)
        env = {
            **environment.inherited(),
            "CT_URL": self.tower.url,
            "CT_TOKEN": self.tower.token,
            "CT_SESSION": claimed["id"],
            "CT_DISPATCHED": "1",
            "CT_AGENT": self.agent_label,
            "CT_BRIEF_FILE": str(brief),
            "PWD": str(space.folder),
            **self.agent.env,
        }
        log = home / f"{claimed['id']}.log"
        words = filled(self.agent.words, text, resume)
        with brief.open("rb") as stdin, log.open("ab") as out:
            process = subprocess.Popen(
                words,
                cwd=space.folder,
                env=env,
                stdin=stdin,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a process group of its own: ended whole
            )
        run = Run(claimed, space, process)
        self.runs[run.session] = run
        self.remember(run)
        verb = "dispatched" if answer is None else "resumed"
        note = f"{verb}: {self.agent_name} on {socket.gethostname()}"
        self.append(run.session, {"type": "session_progress", "note": note[:NOTE_MAX]})
        self.report_work(run)

    def report_work(self, run: Run) -> None:
        """Where the run's work lands (its repository, branch and head commit), when it
        moved since the last report: the handoff names the branch the next attempt
        continues, and a merge of it is matched to the session. Only for a `-- COMMAND`:
        an `--agent`'s hooks report it themselves."""
        if not self.args.trailing:
            return
        found = gitfacts.facts(run.space.folder)
        report = found.report() if found is not None else {}
        if report and report != run.reported:
            run.reported = report
            self.append(run.session, {"type": "session_work", **report})

    # Watching a run ---------------------------------------------------------------------

    def watch(self, run: Run) -> None:
        ended = run.running.poll()
        try:
            view = self.tower.request("GET", f"/sessions/{run.session}")
        except (Refused, Unreachable):
            view = None  # looked at again next tick; the agent goes on
        if view is not None and view.get("status") == "closed":
            self.finish(run, view, fenced=ended is None)
        elif ended is not None:
            self.finish(run, view)
        elif time.monotonic() - run.began > self.args.run_timeout * 60:
            processes.end_group(run.running)
            self.close(run.session, "failed", f"ran past {self.args.run_timeout:g} minutes")
            self.forget(run)
        elif view is not None and self.heartbeat_due(run, view):
            run.beat = time.monotonic()
            self.append(run.session, {"type": "session_progress"})

    def heartbeat_due(self, run: Run, view: dict) -> bool:
        if time.monotonic() - run.beat < self.heartbeat_every:
            return False
        last = view.get("last_activity")
        if not last:
            return True
        quiet = datetime.now(UTC) - datetime.fromisoformat(last.replace("Z", "+00:00"))
        return quiet.total_seconds() >= self.heartbeat_every

    def finish(self, run: Run, view: dict | None, fenced: bool = False) -> None:
        """The run's end: its close decided from how the process ended, unless someone
        else closed the session; parked when it ended blocked."""
        processes.end_group(run.running)
        status = (view or {}).get("status")
        code = run.running.returncode
        if fenced or status == "closed":
            print(f"ct dispatch: {run.session} was closed by someone else: its agent ended")
        elif status == "blocked":
            print(f"ct dispatch: {run.session} waits on a person: parked in {run.space.folder}")
            self.parked[run.session] = self.runs.pop(run.session)
            return  # its worktree kept; a person's answer resumes it
        elif status == "active" and view is not None and files.awaits_answer(run.session):
            # A person answered while it ran, and it ended without hearing it (no tool
            # call, no `ct wait` since): never closed done on a question nobody saw answered.
            print(f"ct dispatch: {run.session} ended before it heard its answer: resumed")
            self.runs.pop(run.session)
            self.resume(run, view)
            return
        elif code == 0:
            self.report_work(run)
            self.push(run)
            said = clean(self.agent.answer(run.log), NOTE_MAX, "line") or "agent finished"
            self.close(run.session, "done", said)
        else:
            self.report_work(run)
            said = clean(run_logs.last_line(run.log), NOTE_MAX, "line") or "no output"
            self.close(run.session, "failed", f"{processes.ending(code)}: {said}"[:NOTE_MAX])
        self.forget(run)

    def watch_parked(self, run: Run) -> None:
        """A parked run: resumed once a person answers (its session unblocked) and a slot
        is free; let go when someone closes its session."""
        view = self.view_of(run.session)
        if view is None:
            return
        if view.get("status") == "closed":
            self.forget(run)
        elif view.get("status") == "active" and len(self.runs) < self.args.agents:
            self.parked.pop(run.session)
            self.resume(run, view)

    def resume(self, run: Run, view: dict) -> None:
        """The agent started again on a person's answer (the session's next action, their
        unblock's note), which counts as heard from now on."""
        files.remember(run.session, view)
        files.await_answer(run.session, False)  # the answer is its prompt
        self.launch(run.claimed, run.space, view.get("next_action") or "answered")

    def push(self, run: Run) -> None:
        if self.args.push and workspace.has_commits_over(self.repo, run.space.branch, self.base):
            problem = workspace.push(run.space)
            if problem:
                print(f"ct dispatch: {run.space.branch} not pushed: {problem}", file=sys.stderr)

    def forget(self, run: Run) -> None:
        workspace.remove(self.repo, run.space.folder)
        workspace.keep_tail(run.log)
        self.runs.pop(run.session, None)
        self.parked.pop(run.session, None)
        self.unrecord(run.session)

    # Stopping ---------------------------------------------------------------------------

    def release_all(self) -> None:
        """Every running agent ended, and its session closed `released` so that its node
        is ready again at once."""
        for run in list(self.runs.values()):
            processes.end_group(run.running)
            self.close(run.session, "released", "dispatcher stopped")
            self.forget(run)

    def summary(self) -> int:
        try:
            plan = self.tower.request("GET", f"/plans/{self.args.plan}")
        except (Refused, Unreachable) as error:
            print(f"ct dispatch: the plan's end is unknown ({error})", file=sys.stderr)
            return REFUSED
        counts = ", ".join(f"{state} {count}" for state, count in plan["counts"].items())
        cost = (plan.get("usage") or {}).get("cost_usd")
        spent = f"; spent ${cost:.2f}" if cost is not None else ""
        print(f"plan {plan['id']}: {plan['status']}: {counts}{spent}")
        return 0 if plan["status"] == "done" else REFUSED

    # The tower and the record -----------------------------------------------------------

    def close(self, session: str, outcome: str, note: str) -> None:
        body = {"type": "session_close", "outcome": outcome, "note": note or outcome}
        self.append(session, body)
        self.plan_feed.moved()

    def pause(self) -> None:
        """Until the next look: a tick, unless idle with a slot free; then until the plan
        moves, for a tick while runs or orphans are watched every tick, else until a claim
        is due all the same (parked runs wake with their unblock, on the plan's feed)."""
        if self.plan_feed.after is None or len(self.runs) >= self.args.agents:
            time.sleep(TICK_SECONDS)
            return
        busy = self.runs or self.orphans
        with contextlib.suppress(Interrupted):  # stopping
            self.plan_feed.wait(TICK_SECONDS if busy else self.plan_feed.seconds_left())

    def append(self, session: str, body: dict) -> None:
        """Append under one idempotency key, tried again while the tower is away: nothing
        doubled, nothing lost while it comes back within seconds."""
        key, body = new_key(), {**body, "agent": self.agent_label}
        for attempt in range(APPEND_TRIES):
            try:
                self.tower.request("POST", f"/sessions/{session}/events", body=body, key=key)
                return
            except Refused as refused:
                if refused.code != "conflict":
                    print(f"ct dispatch: {session}: {refused.detail}", file=sys.stderr)
                return  # closed meanwhile, or refused: nothing more to say to it
            except Unreachable:
                time.sleep(0.5 * 2**attempt)
        print(f"ct dispatch: {session}: the tower did not take {body['type']}", file=sys.stderr)

    def remember(self, run: Run) -> None:
        space = run.space
        entry = {
            "folder": str(space.folder),
            "pgid": run.process.pid if run.process is not None else None,
            "node": space.node,
            "branch": space.branch,
        }
        files.update_json(
            self.record, lambda kept: kept.setdefault("runs", {}).update({run.session: entry})
        )

    def unrecord(self, session: str) -> None:
        def drop(kept: dict) -> None:  # None: the record itself is saved, changed
            kept.get("runs", {}).pop(session, None)

        files.update_json(self.record, drop)

    def clean_leftovers(self) -> None:
        """What an earlier dispatcher of this plan left (killed, it could not clean up):
        the worktrees, and any process still running, of its sessions that are closed;
        its parked sessions, watched again (a person's answer resumes them here); and its
        orphans, runs still open, watched until their sessions close (they lapse and are
        reclaimed, or someone closes them), then ended and removed."""
        kept = files.read_json(self.record).get("runs", {})
        for session, entry in kept.items():
            view = self.view_of(session)
            if view is None:
                continue
            if view["status"] == "closed":
                self.clean(session, entry)
            elif (
                view["status"] == "blocked"
                and not _still_runs(entry)
                and Path(entry["folder"]).is_dir()
            ):
                self.take_up(session, entry)
            else:
                self.orphans[session] = entry

    def watch_orphans(self) -> None:
        for session, entry in list(self.orphans.items()):
            view = self.view_of(session)
            if view is not None and view["status"] == "closed":
                self.orphans.pop(session)
                self.clean(session, entry)

    def view_of(self, session: str) -> dict | None:
        """The session's view; closed when there is no such session; None when the tower
        is away (looked at again later)."""
        try:
            return self.tower.request("GET", f"/sessions/{session}")
        except Refused:
            return {"status": "closed"}
        except Unreachable:
            return None

    def clean(self, session: str, entry: dict) -> None:
        """A closed session's leftovers gone: its process group, when its leader still
        runs in the worktree (not a stranger that took the pid), and its worktree."""
        if _still_runs(entry):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(entry["pgid"], signal.SIGKILL)
        workspace.remove(self.repo, Path(entry["folder"]))
        self.unrecord(session)

    def take_up(self, session: str, entry: dict) -> None:
        """A parked session an earlier dispatcher recorded, parked here now."""
        claimed = {"id": session, "node": entry["node"], "plan": self.args.plan}
        space = workspace.Workspace(
            self.args.plan, entry["node"], session, Path(entry["folder"]), entry["branch"]
        )
        self.parked[session] = Run(claimed, space, None)
        print(f"ct dispatch: {session} waits on a person: parked in {space.folder}")


def _still_runs(entry: dict) -> bool:
    """Whether a recorded run's process group leader still runs in its worktree (not a
    stranger that took the pid since)."""
    return bool(entry.get("pgid")) and processes.runs_in(entry["pgid"], Path(entry["folder"]))
