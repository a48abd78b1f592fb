"""The navigation's Audit opens on the event trail, not on Django's admin home (issue
55: a newcomer looked for the events there)."""

import pytest

pytestmark = pytest.mark.django_db


def test_the_audit_link_opens_on_the_event_trail(client, make_user):
    client.force_login(make_user("auditor", is_staff=True, is_superuser=True))
    page = client.get("/").content.decode()
    assert '<a href="/admin/tower/event/">Audit</a>' in page
