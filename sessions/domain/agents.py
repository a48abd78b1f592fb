"""Whose hand: a person, or an agent program acting for them (docs/rules.md, "Vocabulary":
an event's `agent`). Pure Python."""

# The programs the hooks and the dispatcher name, as people call them; an agent value
# is the program's name and its version (`codex 0.169.0`).
PROGRAM_NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
}


# What the metrics call the sessions that name no agent.
UNNAMED = "unnamed"


def program(agent: str | None) -> str:
    """The program of an `agent` value, as the metrics split by it ("codex 0.169.0" →
    "codex"); `UNNAMED` for none."""
    words = (agent or "").split()
    return words[0] if words else UNNAMED


def program_name(agent: str) -> str:
    """What people call the program of an `agent` value: its first word, spelt as its
    makers spell it when it is one the tower knows ("codex 0.169.0" → "Codex")."""
    program = agent.split()[0] if agent.split() else agent
    return PROGRAM_NAMES.get(program, program)


def hand(person: str | None, agent: str | None) -> str:
    """Who acted: "Codex for alice" when an agent acted for the person, else the person."""
    if not agent:
        return person or ""
    return f"{program_name(agent)} for {person}" if person else program_name(agent)
