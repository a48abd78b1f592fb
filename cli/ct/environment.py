"""Every environment variable `ct` reads, through one door: each one's name, meaning and
default are here and nowhere else (the layers contract refuses `os.environ` and
`os.getenv` in any other module of `ct`). Read when asked, never kept: a test, or a
dispatcher launching an agent, may set them at any time."""

import os
from pathlib import Path


def _given(name: str) -> str | None:
    """The variable's value, or None when it is unset or empty."""
    return os.environ.get(name) or None


def tower_url() -> str | None:
    """`CT_URL`: the tower's root (`http://127.0.0.1:8000`), before what `ct login` saved."""
    return _given("CT_URL")


def tower_token() -> str | None:
    """`CT_TOKEN`: the API token, before what `ct login` saved."""
    return _given("CT_TOKEN")


def session() -> str | None:
    """`CT_SESSION`: the session a command acts on when `--session` is not given; under
    `ct dispatch`, the session the hooks adopt."""
    return _given("CT_SESSION")


def dispatched() -> bool:
    """`CT_DISPATCHED=1`: `ct dispatch` launched this agent (the hooks adopt its session,
    and the dispatcher decides its end)."""
    return os.environ.get("CT_DISPATCHED") == "1"


def plan_to_claim() -> str | None:
    """`CT_CLAIM=<plan>`: the hooks claim the plan's next node at the session's start."""
    return _given("CT_CLAIM")


def plan_node() -> tuple[str, str] | None:
    """`CT_PLAN` and `CT_NODE`, both or neither: the hooks start the session on that node."""
    plan, node = _given("CT_PLAN"), _given("CT_NODE")
    return (plan, node) if plan and node else None


def shares_prompts() -> bool:
    """`CT_SHARE_PROMPTS=0` keeps a person's prompts out of the tower (default: shared)."""
    return os.environ.get("CT_SHARE_PROMPTS") != "0"


def denies_reserved_writes() -> bool:
    """`CT_RESERVATIONS=deny` refuses a write to a path another session holds; `warn`
    (the default) tells the agent and lets it write."""
    return os.environ.get("CT_RESERVATIONS", "warn") == "deny"


def agent() -> str:
    """`CT_AGENT`: the agent program and version the events say wrote them, outright."""
    return _given("CT_AGENT") or ""


def agent_args() -> str:
    """`CT_AGENT_ARGS`: the user's own words added to a dispatched agent's command line."""
    return os.environ.get("CT_AGENT_ARGS", "")


def codex_home() -> Path:
    """`CODEX_HOME`, Codex's own folder (default `~/.codex`)."""
    given = _given("CODEX_HOME")
    return Path(given) if given else Path.home() / ".codex"


def xdg_folder(variable: str, fallback: str) -> Path:
    """An XDG base folder (`XDG_STATE_HOME`, `XDG_CONFIG_HOME`): the variable's path when
    it is absolute, as the XDG specification says, else `~/<fallback>`."""
    given = _given(variable)
    return Path(given) if given and os.path.isabs(given) else Path.home() / fallback


def inherited() -> dict[str, str]:
    """The whole environment, for a process `ct` launches to inherit."""
    return dict(os.environ)
