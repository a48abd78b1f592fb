"""`ct hook opencode`: the events OpenCode's plugin passes on, shaped as the plugin sends
them from OpenCode 1.18's own, each run as its own process against a live server: the
session appears, a refusal is the plugin's `deny`, text for the model its `context`, the
steps' tokens make the usage, and input that is not the plugin's lets OpenCode go on."""

import json

import pytest

from sessions.domain.vocabulary import CLOSE, MESSAGE, PROGRESS, START, USAGE
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.ct_tools import run_ct

pytestmark = pytest.mark.django_db(transaction=True)

OPENCODE_SID = "ses_db774be47ffeSeqIkGJGSM0XDF"
SESSION = f"oc-{OPENCODE_SID}"


@pytest.fixture
def opencode(env, repo):
    """Runs one plugin call of session OPENCODE_SID in the repo."""

    def run(event, *, stdin=None, **fields):
        payload = {"hook_event_name": event, "session_id": OPENCODE_SID, "cwd": str(repo)}
        given = json.dumps({**payload, **fields}) if stdin is None else stdin
        done = run_ct(env, "hook", "opencode", stdin=given)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    return run


def test_a_created_session_starts_an_opencode_session_titled_by_the_branch(opencode):
    opencode("session.created")
    start = Event.objects.get(session=SESSION, seq=1)
    assert (start.type, start.title, start.actor) == (START, "fix-login", "alice")
    assert start.agent.split()[0] == "opencode"


def test_a_message_is_the_plugins_deny_before_the_next_tool(opencode, alice):
    opencode("session.created")
    append_event(SESSION, MESSAGE, {"note": "use the staging keys"}, user=alice)
    said = opencode("tool.execute.before", tool_name="bash", tool_input={"command": "ls"})
    assert said["decision"] == "deny" and "- from alice: use the staging keys" in said["reason"]


def test_a_message_at_a_prompt_is_context_for_the_model(opencode, alice):
    opencode("session.created")
    append_event(SESSION, MESSAGE, {"note": "use the staging keys"}, user=alice)
    said = opencode("chat.message", prompt="fix the cart")
    assert set(said) == {"context"} and "use the staging keys" in said["context"]


def test_a_closed_session_refuses_every_tool_call(opencode, alice):
    opencode("session.created")
    append_event(SESSION, CLOSE, {"note": "stop: merged elsewhere"}, user=alice)
    said = opencode("tool.execute.before", tool_name="bash", tool_input={"command": "git push"})
    assert said["decision"] == "deny" and "closed by alice: stop" in said["reason"]


def test_after_a_write_the_card_says_its_file(opencode, repo):
    opencode("session.created")
    given = {"filePath": str(repo / "src" / "cart.py"), "content": "x"}
    opencode("tool.execute.after", tool_name="write", tool_input=given)
    assert (
        Event.objects.filter(session=SESSION, type=PROGRESS).latest("seq").note
        == "Write src/cart.py"
    )


def test_the_steps_tokens_make_the_usage_each_step_once(opencode):
    opencode("session.created")
    tokens = {"input": 60, "output": 20, "reasoning": 5, "cache": {"read": 40, "write": 3}}
    for part in ("prt_1", "prt_1", "prt_2"):  # a step passed on twice counts once
        opencode("step.finish", part_id=part, model="gpt-5.5", tokens=tokens)
    opencode("session.idle")
    usage = Event.objects.get(session=SESSION, type=USAGE)
    figures = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens)
    assert (usage.usage_model, *figures, usage.cache_write_tokens) == ("gpt-5.5", 120, 50, 80, 6)


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps({"hook_event_name": "tool.execute.before"}),  # no session
        json.dumps({"session_id": OPENCODE_SID, "hook_event_name": "BeforeTool"}),  # Gemini's
        json.dumps({"session_id": OPENCODE_SID, "hook_event_name": "step.finish", "tokens": 7}),
        "\x00\xff" * 1000,
        "[" * 100_000,
    ],
    ids=["missing-fields", "another-agents", "bad-tokens", "binary", "deeply-nested"],
)
def test_input_that_is_not_the_plugins_lets_opencode_go_on_and_writes_nothing(opencode, stdin):
    assert opencode("tool.execute.before", stdin=stdin) is None
    assert not Event.objects.filter(session=SESSION).exists()
