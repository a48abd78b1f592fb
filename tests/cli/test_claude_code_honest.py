"""The tower says what is true of the real Claude Code (pinned in tests/agents), headless
against a stand-in for its model with `ct`'s hooks (issue 55): an agent that ends while
its budget pauses it closes `abandoned`, never `done`; and a person's answer on the
board reaches the model's next request, naming who answered."""

import json
import subprocess

import pytest

from sessions.domain.vocabulary import CLOSE, PLAN_CREATE, START, UNBLOCK, USAGE
from sessions.models import Event
from sessions.readmodels import plan_views
from sessions.rules.append import append_event
from tests.cli.test_claude_code import CLAUDE, claude_env, drive, required
from tests.support.model_standin import ModelStandIn, request_text, text, tool_use

pytestmark = pytest.mark.django_db(transaction=True)


def started_session():
    return Event.objects.get(type=START, plan="p").session


def test_claude_code_ending_while_its_budget_pauses_it_closes_abandoned(
    project, tmp_path, live_server, token, alice
):
    required(CLAUDE, "Claude Code")
    nodes = [{"key": "a", "title": "Migrate", "budget_usd": 1}]
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    script = [
        [tool_use("Bash", {"command": "echo migrate", "description": "Migrate"})],
        [text("I will wait for a person.")],
    ]

    def spent_past_the_budget():  # $3 of Sonnet, reported before its next tool call
        counts = {"input_tokens": 1_000_000, "output_tokens": 0, "cache_read_tokens": 0}
        spent = {"model": "claude-sonnet-4-5", **counts, "cache_write_tokens": 0}
        append_event(started_session(), USAGE, spent, user=alice)

    with ModelStandIn(script) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        env.update(CT_PLAN="p", CT_NODE="a")
        returncode, _, err = drive(project, env, model, "Migrate", spent_past_the_budget)
    assert returncode == 0, err
    assert "budget spent" in request_text(model.requests[1])  # the model was told to stop
    close = Event.objects.get(session=started_session(), type=CLOSE)
    assert close.outcome == "abandoned"
    assert close.note.startswith("ended while blocked: budget spent: $3.00 of $1.00")
    assert plan_views.plan_view("p").node("a").state != "done"


def test_a_persons_answer_on_the_board_reaches_claude_codes_next_request(
    project, tmp_path, live_server, token, alice
):
    required(CLAUDE, "Claude Code")

    def model_says(body):
        said = request_text(body)
        session = Event.objects.get(type=START).session
        if said.count("tool_result") == 0:
            ask = f"ct block --session {session} 'Which database?'"
            return [tool_use("Bash", {"command": ask, "description": "Ask a person"})]
        if said.count("tool_result") == 1:  # it asked; a person answers on the board
            append_event(session, UNBLOCK, {"note": "use postgres"}, user=alice)
            return [tool_use("Bash", {"command": "echo migrate", "description": "Migrate"})]
        return [text("Using postgres.")]

    with ModelStandIn(model_says) as model:
        env = claude_env(tmp_path / "home", live_server.url, token, model.url)
        words = [str(CLAUDE), "-p", "Migrate", "--output-format", "json"]
        claude = subprocess.Popen(
            [*words, "--allowedTools", "Bash"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        model.gate.set()
        try:
            out, err = claude.communicate(timeout=180)
        finally:
            claude.kill()
    assert claude.returncode == 0, err
    assert json.loads(out)["result"] == "Using postgres."
    told = request_text(model.requests[2])
    assert "Control Tower: alice answered: use postgres" in told
