"""The admin is a read-only audit trail of every event."""

import pytest
from django.urls import reverse

from sessions.domain.vocabulary import BLOCK
from sessions.models import Event
from sessions.rules.append import append_event


@pytest.fixture
def superuser_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    return client


@pytest.fixture
def audited(started, alice):
    append_event(started, BLOCK, {"reason": "needs <b>review</b>"}, user=alice)
    append_event("other", "session_start", {"title": "Other"}, user=alice)
    return Event.objects.get(session=started, seq=2)


def changelist(client, **params):
    return client.get(reverse("admin:tower_event_changelist"), params)


def test_the_changelist_shows_every_event_with_its_columns(superuser_client, audited):
    page = changelist(superuser_client).content.decode()
    assert page.count('class="field-session"') == 3
    assert "needs &lt;b&gt;review&lt;/b&gt;" in page
    assert "session_block" in page


def test_events_can_be_filtered_by_type(superuser_client, audited):
    page = changelist(superuser_client, type__exact=BLOCK).content.decode()
    assert page.count('class="field-session"') == 1


def test_events_can_be_filtered_by_actor(superuser_client, audited):
    assert (
        changelist(superuser_client, actor="nobody").content.decode().count('class="field-session"')
        == 0
    )


def test_search_finds_session_ids_and_notes(superuser_client, audited):
    assert (
        changelist(superuser_client, q="other").content.decode().count('class="field-session"') == 1
    )
    assert (
        changelist(superuser_client, q="review").content.decode().count('class="field-session"')
        == 1
    )


def test_nobody_may_add_events(superuser_client, audited):
    assert superuser_client.get(reverse("admin:tower_event_add")).status_code == 403


def test_an_event_page_is_read_only(superuser_client, audited):
    url = reverse("admin:tower_event_change", args=[audited.pk])
    response = superuser_client.post(url, {"reason": "rewritten"})
    assert response.status_code == 403
    assert Event.objects.get(pk=audited.pk).reason == "needs <b>review</b>"


def test_nobody_may_delete_events(superuser_client, audited):
    url = reverse("admin:tower_event_delete", args=[audited.pk])
    assert superuser_client.post(url, {"post": "yes"}).status_code == 403
    assert Event.objects.count() == 3


def test_the_changelist_offers_no_delete_action(superuser_client, audited):
    assert "delete_selected" not in changelist(superuser_client).content.decode()


def test_the_audit_trail_shows_moments_as_iso_utc(admin_client, started):
    from sessions.models import Event

    event = Event.objects.get(session=started, seq=1)
    page = admin_client.get("/admin/tower/event/").content.decode()
    assert event.timestamp.strftime("%Y-%m-%d %H:%M:%S") in page
    assert "a.m." not in page and "p.m." not in page
