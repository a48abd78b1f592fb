"""The real Claude Code (tests/agents: `npm ci`, pinned), run headless against a stand-in
for its model API on loopback, with the hooks `ct hooks claude-code --install` wrote: its
session reports by itself, a person's message posted mid-session reaches the model in
its next request, a merge stops its pushing, and the tower's usage of the session is
what Claude Code's own transcript says. Also: the hook inputs these tests send are shaped as
`@anthropic-ai/claude-agent-sdk`'s published types declare them (tests/agents/sdk.d.ts)."""

import json
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessions.domain.vocabulary import MESSAGE, PROGRESS, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.cli.conftest import with_hooks
from tests.support import forge, real_agents
from tests.support.ct_tools import CT, EVENT_FIELDS, ct_env
from tests.support.git_repo import checkout as new_checkout
from tests.support.git_repo import commit
from tests.support.http import http_request
from tests.support.model_standin import ModelStandIn, request_text, text, tool_use

pytestmark = pytest.mark.django_db(transaction=True)

AGENTS = Path(__file__).resolve().parents[1] / "agents"
CLAUDE = AGENTS / "node_modules" / ".bin" / "claude"
SDK_TYPES = AGENTS / "sdk.d.ts"


def required(path: Path, what: str) -> None:
    if path.exists():
        return
    message = f"{what} is missing at {path} (make agents)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; the agent tests are required under CI=true.")
    pytest.skip(message + "; skipped.")


# The published types ------------------------------------------------------------------


def declared_fields(source: str, type_name: str) -> dict[str, bool]:
    """The top-level fields of `type_name = BaseHookInput & { ... }` (or a plain object
    type) in a .d.ts, each with whether it is required."""
    start = re.search(rf"declare type {type_name} = [^{{]*\{{", source)
    assert start, type_name
    depth, index, body = 1, start.end(), []
    while depth:
        char = source[index]
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 1 or (depth == 2 and char == "{"):
            body.append(char)
        index += 1
    text_body = re.sub(r"/\*\*.*?\*/", "", "".join(body), flags=re.S)
    return {
        name: not optional
        for name, optional in re.findall(r"^\s*(\w+)(\?)?:", text_body, flags=re.M)
    }


@pytest.mark.parametrize("event", sorted(EVENT_FIELDS))
def test_the_hook_inputs_sent_in_tests_have_the_fields_the_sdk_declares(event):
    required(SDK_TYPES, "@anthropic-ai/claude-agent-sdk's types")
    source = SDK_TYPES.read_text()
    base = declared_fields(source, "BaseHookInput")
    own = declared_fields(source, f"{event}HookInput")
    declared = {**base, **own}
    sent = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}
    sent |= set(EVENT_FIELDS[event])
    assert sent <= set(declared), sent - set(declared)
    assert {name for name, needed in declared.items() if needed} <= sent


@pytest.mark.parametrize(
    "output_type, fields",
    [
        ("PreToolUseHookSpecificOutput", {"permissionDecision", "permissionDecisionReason"}),
        ("PostToolUseHookSpecificOutput", {"additionalContext"}),
        ("UserPromptSubmitHookSpecificOutput", {"additionalContext"}),
        ("SessionStartHookSpecificOutput", {"additionalContext"}),
    ],
)
def test_the_hook_outputs_ct_writes_are_the_sdks(output_type, fields):
    required(SDK_TYPES, "@anthropic-ai/claude-agent-sdk's types")
    declared = declared_fields(SDK_TYPES.read_text(), output_type)
    assert fields | {"hookEventName"} <= set(declared)


# The real thing -----------------------------------------------------------------------


def claude_env(home: Path, tower: str, token: str, model: str) -> dict:
    env = ct_env(home, tower, token)
    env.update(
        ANTHROPIC_BASE_URL=model,
        ANTHROPIC_API_KEY="sk-ant-standin",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        PATH=f"{Path(CT).parent}:{env['PATH']}",
    )
    return env


def drive(project, env, model, prompt, meanwhile):
    """Claude Code run headless in `project` on `prompt`; `meanwhile()` runs once it has
    asked its model, before the model answers. (return code, stdout, stderr)"""
    claude = subprocess.Popen(
        [str(CLAUDE), "-p", prompt, "--output-format", "json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert model.first_request.wait(timeout=120), "Claude Code never asked its model"
        meanwhile()
        model.gate.set()
        out, err = claude.communicate(timeout=120)
    finally:
        claude.kill()
    return claude.returncode, out, err


def test_a_person_s_message_mid_session_reaches_claude_code_s_next_request(
    project, tmp_path, live_server, token, alice
):
    required(CLAUDE, "Claude Code")
    script = [
        [tool_use("Bash", {"command": "echo migrated", "description": "Migrate"})],
        [text("Understood: staging keys it is.")],
    ]
    found = {}

    def person_writes():
        [found["session"]] = Event.objects.filter(type=START).values_list("session", flat=True)
        append_event(found["session"], MESSAGE, {"note": "use the staging keys"}, user=alice)

    with ModelStandIn(script) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        # The model answers a Bash call after the person wrote: the hook holds it back.
        returncode, out, err = drive(project, env, model, "Migrate the schema", person_writes)
    session = found["session"]
    assert returncode == 0, err
    assert json.loads(out)["result"] == "Understood: staging keys it is."
    told = request_text(model.requests[1])
    assert "from alice: use the staging keys" in told
    events = list(Event.objects.filter(session=session).order_by("seq"))
    assert session.startswith("cc-") and events[0].title == "fix-login"
    kinds = [e.type for e in events]
    assert kinds[kinds.index(MESSAGE) + 1] == PROGRESS  # acknowledged once handed over
    assert kinds[-2:] == ["session_block", "session_close"]  # Stop, then SessionEnd
    assert (events[-2].reason, events[-1].outcome) == ("waiting for the next prompt", "done")


@pytest.fixture
def real_project(tmp_path):
    """A real git checkout of acme/shop on fix-login with a commit, the hooks installed."""
    folder = new_checkout(tmp_path / "shop")
    commit(folder)
    return with_hooks(folder, tmp_path)


def test_after_a_merge_claude_code_s_next_tool_call_is_told_to_stop_pushing(
    real_project, tmp_path, live_server, token, settings
):
    """GitHub merges the pull request while the agent works: its next tool call is
    refused with the merge's words, which reach the model's next request."""
    required(CLAUDE, "Claude Code")
    settings.GITHUB_WEBHOOK_SECRET = forge.SECRET
    script = [
        [tool_use("Bash", {"command": "git push", "description": "Push the fix"})],
        [text("Stopping: the work is merged.")],
    ]

    def github_merges():
        payload = forge.example("pull_request", "closed")
        pr = payload["pull_request"]
        pr["head"]["ref"], pr["head"]["repo"]["full_name"] = "fix-login", "acme/shop"
        pr["number"], pr["merged"], pr["merge_commit_sha"] = 94, True, "9e" * 20
        pr["merged_at"] = datetime.now(UTC).isoformat()  # after the session opened
        delivered = forge.deliver(live_server.url, "pull_request", payload)
        assert len(delivered.json()["appended"]) == 1, delivered.json()

    with ModelStandIn(script) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        # The model answers a push after the merge: the hook refuses it.
        returncode, _, err = drive(real_project, env, model, "Push the fix", github_merges)
    assert returncode == 0, err
    told = request_text(model.requests[1])
    assert f"PR #94 merged at {'9e' * 20}: your work is in; stop pushing" in told


# Spend: what Claude Code's own transcript says it spent ------------------------------

# Claude Code's usage figures, in the order of the tower's input, output, cache read and
# cache write.
USAGE_NAMES = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def transcript_totals(path: Path) -> dict[str, list[int]]:
    """Per model, what the transcript says was spent: each reply (by its id) once, with
    the largest figures any of its lines gives."""
    replies: dict[tuple[str, str], list[int]] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") if entry.get("type") == "assistant" else None
        if not isinstance(message, dict) or not message.get("usage"):
            continue
        figures = [message["usage"].get(name) or 0 for name in USAGE_NAMES]
        key = (message["model"], message["id"])
        replies[key] = [max(pair) for pair in zip(replies.get(key, figures), figures, strict=True)]
    totals: dict[str, list[int]] = {}
    for (model, _), figures in replies.items():
        totals[model] = [a + b for a, b in zip(totals.get(model, [0] * 4), figures, strict=True)]
    return totals


def test_the_towers_usage_is_what_claude_codes_own_transcript_says(
    project, tmp_path, live_server, token
):
    required(CLAUDE, "Claude Code")
    script = [
        [tool_use("Bash", {"command": "echo migrated", "description": "Migrate"})],
        [text("Migrated.")],
    ]
    with ModelStandIn(script) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        returncode, _, err = drive(project, env, model, "Migrate the schema", lambda: None)
    assert returncode == 0, err
    [session] = Event.objects.filter(type=START).values_list("session", flat=True)
    claude_session = session.removeprefix("cc-")
    [transcript] = (tmp_path / "home" / ".claude").rglob(f"{claude_session}.jsonl")
    said = transcript_totals(transcript)
    assert said, "the transcript holds no usage"
    usage = http_request(live_server.url, "GET", f"/api/sessions/{session}", token=token).json()
    kinds = ("input", "output", "cache_read", "cache_write")
    found = {m: [part[k] for k in kinds] for m, part in usage["usage"]["by_model"].items()}
    assert found == said


# Space: a write to a path another session holds ------------------------------------


def test_under_deny_claude_code_s_write_to_a_held_path_is_refused_and_the_model_told(
    real_project, tmp_path, live_server, token, bob
):
    """Bob's session runs the node holding src/billing: the real Claude Code's Write
    there is refused by the hook (`CT_RESERVATIONS=deny`), the file is never written,
    and the model's next request carries who holds it."""
    required(CLAUDE, "Claude Code")
    real_agents.bob_holds_billing(bob)
    target = real_project / "src" / "billing" / "ledger.py"
    script = [
        [tool_use("Write", {"file_path": str(target), "content": "x = 1\n"})],
        [text("Leaving the ledger to bob.")],
    ]
    with ModelStandIn(script) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        env["CT_RESERVATIONS"] = "deny"
        returncode, _, err = drive(real_project, env, model, "Fix the ledger", lambda: None)
    assert returncode == 0, err
    told = request_text(model.requests[1])
    assert (
        "src/billing/ledger.py is reserved by bob's session bobs (node billing of plan p)" in told
    )
    assert not target.exists()
