"""Whose hand, on the pages (docs/rules.md, "Vocabulary": an event's `agent`): "Codex for
alice" on the card, the session page and the timeline, the version on hover and in the
audit; a person's form never says an agent wrote it."""

import pytest
from django.urls import reverse

from sessions.domain.vocabulary import PROGRESS, START
from sessions.models import Event
from sessions.rules.append import append_event

CODEX = "codex 0.169.0"


@pytest.fixture
def by_codex(alice):
    append_event("s1", START, {"title": "Ship it", "agent": CODEX}, user=alice)
    append_event("s1", PROGRESS, {"note": "Edit a.py", "agent": CODEX}, user=alice)
    return "s1"


@pytest.mark.django_db
def test_the_card_says_which_agent_works_for_whom(alice_client, by_codex):
    page = alice_client.get("/").content.decode()
    assert f'<span title="{CODEX}">Codex for alice</span>' in page


@pytest.mark.django_db
def test_the_timeline_says_whose_hand_wrote_each_event(alice_client, by_codex, alice):
    append_event("s1", "session_message", {"note": "hello"}, user=alice)
    page = alice_client.get(reverse("session", args=["s1"])).content.decode()
    assert page.count(">Codex for alice</span></td>") == 2
    assert "<td>alice</td><td>session_message</td>" in page


@pytest.mark.django_db
def test_a_persons_form_never_carries_an_agent(alice_client, by_codex):
    alice_client.post(reverse("act", args=["s1", "block"]), {"reason": "r", "agent": CODEX})
    block = Event.objects.get(session="s1", seq=3)
    assert (block.type, block.agent) == ("session_block", None)


@pytest.mark.django_db
def test_the_audit_lists_the_agent_beside_the_actor(client, django_user_model, by_codex):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    page = client.get(reverse("admin:tower_event_changelist")).content.decode()
    assert '<td class="field-agent">codex 0.169.0</td>' in page
