"""Tokens, self-service: a person makes a token (shown once), sees when each was made and
last used, and revokes it; a superuser sees everyone's."""

import html
import json

import pytest

from sessions.models import ApiToken
from sessions.rules.tokens import create_token, digest

pytestmark = pytest.mark.django_db


def test_a_new_token_is_shown_once_and_only_its_digest_is_kept(alice, alice_client):
    answer = alice_client.post("/tokens/", {"name": "claude-on-laptop"}, follow=True)
    assert answer.redirect_chain == [("/tokens/", 302)]
    token = answer.context["made"][1]
    row = ApiToken.objects.get(user=alice)
    assert (row.name, row.digest) == ("claude-on-laptop", digest(token))
    assert token in answer.content.decode()
    assert token not in alice_client.get("/tokens/").content.decode()


def test_a_token_made_on_the_page_acts_as_its_maker(alice, alice_client, client):
    token = alice_client.post("/tokens/", {"name": "agent"}, follow=True).context["made"][1]
    answer = client.post(
        "/api/sessions",
        {"title": "From my agent"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 201 and answer.json()["owner"] == "alice"


def test_a_token_needs_a_name_and_the_form_says_so(alice_client):
    answer = alice_client.post("/tokens/", {"name": "  "})
    assert answer.status_code == 400
    assert "This field is required." in answer.content.decode()
    assert not ApiToken.objects.exists()


def test_a_person_sees_only_their_own_tokens(alice, bob, alice_client):
    create_token(alice, "mine")
    create_token(bob, "bobs-agent")
    page = alice_client.get("/tokens/").content.decode()
    assert "mine" in page and "bobs-agent" not in page


def test_a_superuser_sees_everyone_s_tokens(alice, bob, client, django_user_model):
    create_token(alice, "alices-agent")
    create_token(bob, "bobs-agent")
    client.force_login(django_user_model.objects.create_superuser("root", password="x"))
    page = client.get("/tokens/").content.decode()
    assert "alices-agent" in page and "bobs-agent" in page


def test_a_revoked_token_is_refused_by_the_api(alice, alice_client, client):
    row, token = create_token(alice, "agent")
    assert alice_client.post(f"/tokens/{row.pk}/revoke").status_code == 302
    answer = client.get("/api/sessions", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401
    assert "revoked" in alice_client.get("/tokens/").content.decode()


def test_nobody_revokes_another_person_s_token(alice, bob, alice_client):
    row, _ = create_token(bob, "bobs-agent")
    assert alice_client.post(f"/tokens/{row.pk}/revoke").status_code == 404
    assert ApiToken.objects.get(pk=row.pk).revoked_at is None


def test_revoking_needs_a_post(alice, alice_client):
    row, _ = create_token(alice, "agent")
    assert alice_client.get(f"/tokens/{row.pk}/revoke").status_code == 405


def test_the_tokens_page_needs_a_signed_in_person(client):
    assert client.get("/tokens/").status_code == 302


def test_the_page_gives_an_mcp_client_configuration_with_the_new_token(alice_client):
    answer = alice_client.post("/tokens/", {"name": "claude"}, follow=True)
    token = answer.context["made"][1]
    config = json.loads(answer.context["mcp_config"])
    assert config == {
        "mcpServers": {
            "control-tower": {
                "type": "http",
                "url": "http://testserver/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    assert html.escape(answer.context["mcp_config"]) in answer.content.decode()
    later = alice_client.get("/tokens/")
    assert token not in later.content.decode()
    assert "Bearer &lt;your token&gt;" in later.content.decode()


def test_a_token_made_on_the_page_expires_in_90_days_unless_told_otherwise(alice, alice_client):
    alice_client.post("/tokens/", {"name": "default"})
    alice_client.post("/tokens/", {"name": "forever", "scope": "read", "expires_in": "never"})
    default, forever = (ApiToken.objects.get(name=n) for n in ("default", "forever"))
    assert (default.scope, (default.expires_at - default.created_at).days) == ("write", 89)
    assert (forever.scope, forever.expires_at) == ("read", None)


def test_the_page_shows_each_tokens_scope_expiry_and_last_use(alice, alice_client):
    create_token(alice, "dashboard", read_only=True, expires_in_days=30)
    page = alice_client.get("/tokens/").content.decode()
    row = page[page.index("<td>dashboard</td>") :].split("</tr>")[0]
    cells = [cell.split("</td>")[0] for cell in row.split("<td>")[1:]]
    assert cells[2] == "read"
    assert cells[4].endswith("UTC</time>")  # expires
    assert cells[5] == "never"  # used
