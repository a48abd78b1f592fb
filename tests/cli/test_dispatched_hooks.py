"""The hooks under `ct dispatch` (`CT_DISPATCHED=1`, docs/rules.md, "Running the plan"): they
adopt the session the dispatcher claimed (`CT_SESSION`) and report into it; a turn's end
blocks nothing and the agent's exit closes nothing, since the dispatcher judges the run
by how its process ended."""

import pytest

from sessions.domain.vocabulary import PLAN_CREATE, PROGRESS, START
from sessions.models import Event
from sessions.rules.append import append_event
from tests.support.ct_tools import hook_payload, run_hook

pytestmark = pytest.mark.django_db(transaction=True)

SID = "7a8b9c0d-0000-4000-8000-00000000d15a"


@pytest.fixture
def claimed(alice):
    nodes = [{"key": "a", "title": "Schema"}]
    append_event("p", PLAN_CREATE, {"title": "Ship", "nodes": nodes}, user=alice)
    append_event("run-1", START, {"plan": "p", "node": "a"}, user=alice)
    return "run-1"


@pytest.fixture
def dispatched(env, claimed):
    return {**env, "CT_DISPATCHED": "1", "CT_SESSION": claimed}


def hook(environment, repo, event, **fields):
    done = run_hook(environment, hook_payload(event, SID, repo, **fields))
    assert done.returncode == 0, done.stderr
    return done


def types(session):
    return list(
        Event.objects.filter(session=session).order_by("seq").values_list("type", flat=True)
    )


def test_the_hooks_adopt_the_dispatched_session_and_start_none(dispatched, repo, claimed):
    hook(dispatched, repo, "SessionStart")
    hook(dispatched, repo, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert not Event.objects.filter(session__startswith="cc-").exists()
    assert types(claimed) == [START, PROGRESS]


def test_a_turns_end_blocks_nothing_and_the_end_closes_nothing(dispatched, repo, claimed):
    hook(dispatched, repo, "SessionStart")
    hook(dispatched, repo, "Stop")
    hook(dispatched, repo, "SessionEnd", reason="other")
    assert types(claimed) == [START]


def test_without_the_dispatcher_the_hooks_start_their_own(env, repo, claimed):
    hook({**env, "CT_SESSION": claimed}, repo, "SessionStart")
    assert Event.objects.filter(session__startswith="cc-", type=START).count() == 1
    assert types(claimed) == [START]  # the claimed session untouched
