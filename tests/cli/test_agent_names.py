"""Which agent `ct` writes for (docs/rules.md, "Vocabulary": an event's `agent`): the hooks
stamp every event with the program and the version of its npm package, `CT_AGENT` says it
outright, and a person's own `ct` says nothing."""

import json
import os

import pytest

from sessions.models import Event
from tests.cli.conftest import SESSION
from tests.support.ct_tools import run_ct

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def claude_on_path(tmp_path, env):
    """A `claude` on PATH whose npm package says version 9.8.7."""
    package = tmp_path / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@anthropic-ai/claude-code", "version": "9.8.7"})
    )
    (package / "cli.js").write_text("#!/usr/bin/env node\n")
    (package / "cli.js").chmod(0o755)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "claude").symlink_to(package / "cli.js")
    return {**env, "PATH": f"{bin_folder}{os.pathsep}{env['PATH']}"}


def agents_of(session=SESSION):
    return list(
        Event.objects.filter(session=session).order_by("seq").values_list("agent", flat=True)
    )


def test_every_event_the_hooks_write_names_the_program_and_its_version(hook, claude_on_path):
    hook("SessionStart", environment=claude_on_path)
    hook(
        "PostToolUse", environment=claude_on_path, tool_name="Bash", tool_input={"command": "make"}
    )
    hook("SessionEnd", environment=claude_on_path, reason="logout")
    agents = agents_of()
    assert len(agents) >= 3 and set(agents) == {"claude-code 9.8.7"}


def test_without_its_package_found_the_hooks_name_the_program_alone(hook, env):
    hook("SessionStart", environment={**env, "PATH": "/usr/bin:/bin"})
    assert agents_of() == ["claude-code"]


def test_ct_agent_says_it_outright(hook, env):
    hook("SessionStart", environment={**env, "CT_AGENT": "claude-code 2.1.332"})
    assert agents_of() == ["claude-code 2.1.332"]


def test_a_persons_own_ct_says_no_agent_and_an_agents_says_its_own(env, alice):
    assert run_ct(env, "start", "Ship", "--id", "s9").returncode == 0
    blocked = run_ct({**env, "CT_AGENT": "codex 0.169.0"}, "block", "which db?", "--session", "s9")
    assert blocked.returncode == 0, blocked.stderr
    assert agents_of("s9") == [None, "codex 0.169.0"]
