"""The module of each agent's hook, by the name `ct hook AGENT` takes. A room of its own,
so that `ct.entry` (which must start fast) and `ct.main` (`ct hook --help`) share it
without importing each other."""

HOOK_MODULES = {
    "claude-code": "ct.claude_code",
    "codex": "ct.codex",
    "gemini": "ct.gemini",
    "opencode": "ct.opencode",
}
