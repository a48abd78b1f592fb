"""`ct hooks AGENT --install [--shared]`: each agent's hooks merged into that agent's own
settings file, keeping what is there, and the person told what the agent asks before it
trusts them. (That the real Codex and Gemini CLI run what is written here is
`test_codex_real` and `test_gemini_real`, which install their hooks this way.)"""

import json
import os
import subprocess

import pytest

from tests.support.ct_tools import CT, ct_env
from tests.support.git_repo import checkout as new_checkout


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def shop(tmp_path):
    return new_checkout(tmp_path / "shop")


def install(home, folder, agent, *flags, **environment):
    env = ct_env(home, None, None, **environment)
    words = [CT, "hooks", agent, "--install", *flags]
    done = subprocess.run(words, env=env, cwd=folder, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commands(settings):
    return {
        event: [hook["command"] for group in groups for hook in group["hooks"]]
        for event, groups in json.loads(settings.read_text())["hooks"].items()
    }


def test_claude_codes_personal_settings_are_kept_out_of_git_once(home, shop):
    for _ in range(2):
        said = install(home, shop, "claude-code")
    exclude = (shop / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("/.claude/settings.local.json") == 1
    assert "kept out of git" not in said and "git leaves it out" in said
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=shop, capture_output=True, text=True
    )
    assert ".claude" not in status.stdout


def test_codex_hooks_go_into_codex_home_for_every_event_keeping_what_is_there(home, shop, tmp_path):
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    mine = {"type": "command", "command": "./notify.sh"}
    hooks = codex_home / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine]}]}}))
    said = install(home, shop, "codex", CODEX_HOME=str(codex_home))
    found = commands(hooks)
    assert set(found) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "Stop",
        "SessionEnd",
    }
    assert found["Stop"][0] == "./notify.sh" and found["Stop"][1].endswith("ct hook codex")
    assert "/hooks" in said  # how Codex is told to trust them


def test_codex_shared_hooks_go_into_the_project_with_ct_from_the_path(home, shop):
    install(home, shop, "codex", "--shared")
    found = commands(shop / ".codex" / "hooks.json")
    assert {command for listed in found.values() for command in listed} == {"ct hook codex"}


def test_gemini_hooks_join_its_user_settings_keeping_its_sign_in(home, shop):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    said = install(home, shop, "gemini")
    merged = json.loads(settings.read_text())
    assert merged["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert set(merged["hooks"]) == {
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "AfterTool",
        "Notification",
        "AfterAgent",
        "SessionEnd",
    }
    [group] = merged["hooks"]["BeforeTool"]
    assert group["matcher"] == "*" and group["hooks"][0]["name"] == "control-tower"
    assert "accept" in said  # Gemini CLI's fingerprint of a project's hooks


def test_gemini_shared_hooks_go_into_the_project_with_ct_from_the_path(home, shop):
    install(home, shop, "gemini", "--shared")
    found = commands(shop / ".gemini" / "settings.json")
    assert {command for listed in found.values() for command in listed} == {"ct hook gemini"}


def test_opencodes_plugin_goes_into_its_config_folder_running_this_ct(home, shop):
    said = install(home, shop, "opencode")
    plugin = (home / "config" / "opencode" / "plugins" / "control-tower.js").read_text()
    assert f'const COMMAND = ["{os.path.realpath(CT)}", "hook", "opencode"];' in plugin
    assert "asks nothing" in said
    install(home, shop, "opencode")  # again: the same file, rewritten whole
    assert (home / "config" / "opencode" / "plugins" / "control-tower.js").read_text() == plugin


def test_opencodes_shared_plugin_goes_into_the_project_with_ct_from_the_path(home, shop):
    install(home, shop, "opencode", "--shared")
    plugin = (shop / ".opencode" / "plugins" / "control-tower.js").read_text()
    assert 'const COMMAND = ["ct", "hook", "opencode"];' in plugin
