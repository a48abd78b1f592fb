"""Whose hand (`domain.agents`): a person, or an agent program acting for them."""

from hypothesis import given
from hypothesis import strategies as st

from sessions.domain.agents import hand, program_name


def test_a_known_program_is_named_as_its_makers_spell_it():
    assert hand("alice", "claude-code 2.1.332") == "Claude Code for alice"
    assert hand("bob", "gemini 0.61.0") == "Gemini CLI for bob"


def test_an_unknown_program_is_named_by_its_first_word():
    assert hand("alice", "aider 0.80") == "aider for alice"


def test_no_agent_is_the_person_in_person():
    assert hand("alice", None) == "alice"


@given(st.text(min_size=1, max_size=100))
def test_any_agent_value_gives_a_name(agent):
    assert hand("alice", agent).endswith(" for alice")
    assert program_name(agent)
