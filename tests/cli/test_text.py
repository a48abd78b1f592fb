"""`ct.text.clean` keeps exactly what the tower takes: the client cannot import the
tower's rule (`sessions.domain.vocabulary`), so this checks the two agree, character by
character, over the planes where every refused character lives."""

import pytest
from ct import agent_names, dispatch, hook_engine, lines
from ct import space as ct_space
from ct.text import clean

from sessions.domain import agents, paths, vocabulary

# The Basic Multilingual Plane holds every refused character; a few others for good measure.
CHARACTERS = [chr(c) for c in range(0x10000)] + ["\U0001f468", "\U000e0001", "\U0010ffff"]


@pytest.mark.parametrize("kind", ["line", "text"])
def test_clean_takes_out_exactly_the_characters_the_tower_refuses(kind):
    disagree = []
    for character in CHARACTERS:
        text = f"a{character}b"
        taken = vocabulary.text_error(text, 10, kind) is None
        kept = clean(text, 10, kind) == text
        if taken != kept and character != "\x1b":
            disagree.append(f"U+{ord(character):04X}")
    assert disagree == []


def test_an_emoji_with_joiners_is_kept_whole():
    assert clean("👨‍💻 ❤️‍🔥 🏳️‍🌈 yes", 200) == "👨‍💻 ❤️‍🔥 🏳️‍🌈 yes"


def test_an_ansi_colour_is_taken_out_with_its_letters():
    assert clean("\x1b[1;31mfailed\x1b[0m", 200) == "failed"


def test_nothing_left_is_none():
    assert clean("\u202e\u200b  ", 200) is None


# `ct`'s own copies of the tower's length limits (it cannot import them): each the same
# as the vocabulary's, or a hook's text would be refused where it should be cut.
@pytest.mark.parametrize(
    ("copied", "field"),
    [
        ("TITLE_MAX", "title"),
        ("REASON_MAX", "reason"),
        ("NOTE_MAX", "note"),
    ],
)
def test_the_hooks_text_limits_are_the_vocabularys(copied, field):
    assert getattr(hook_engine, copied) == vocabulary.MAX_LENGTH[field]


def test_the_hooks_model_limit_is_the_vocabularys():
    assert hook_engine.MODEL_MAX == vocabulary.MODEL_MAX


def test_the_agent_limit_is_the_vocabularys():
    assert agent_names.AGENT_MAX == vocabulary.AGENT_MAX


def test_ct_calls_each_program_what_the_tower_calls_it():
    assert agent_names.PROGRAM_NAMES == agents.PROGRAM_NAMES


def test_the_dispatchers_notes_and_the_hooks_prompt_notes_fit_a_note():
    assert vocabulary.MAX_LENGTH["note"] >= dispatch.NOTE_MAX
    assert vocabulary.MAX_LENGTH["note"] >= hook_engine.PROMPT_NOTE_MAX


def test_the_hooks_caps_on_a_heartbeats_paths_are_the_towers():
    assert (ct_space.PATHS_MAX, ct_space.PATH_MAX) == (paths.PATHS_MAX, paths.PATH_MAX)


def test_what_a_card_says_the_agent_is_doing_fits_a_note():
    assert vocabulary.MAX_LENGTH["note"] >= lines.DOING_MAX
