"""A person's API tokens: made (shown once), listed, revoked."""

import json

from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from sessions.rules import tokens
from sessions.web.forms import (
    TokenForm,
)
from sessions.web.pages import (
    WITH_FORM,
    action,
    page,
)

# Where a new token waits in its maker's session for the page after the redirect.
NEW_TOKEN = "tower_new_token"


@page("tokens/", "tokens", methods=WITH_FORM)
def token_list(request):
    """A person's API tokens: make one (shown once), see when each was last used, revoke.

    A new token goes to the page after the redirect through the person's session, and is
    taken out of it as it is shown: reloading the page neither shows it again nor makes
    another token."""
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data
        row, token = tokens.create_token(
            request.user,
            chosen["name"],
            read_only=chosen["scope"] == tokens.READ,
            expires_in_days=chosen["expires_in"],
        )
        request.session[NEW_TOKEN] = [row.name, token]
        return redirect("tokens")
    made = request.session.pop(NEW_TOKEN, None)
    context = {
        "form": form,
        "made": made,
        "tokens": tokens.visible_tokens(request.user),
        "now": timezone.now(),
        "tower_url": request.build_absolute_uri("/").rstrip("/"),
        "mcp_config": mcp_client_config(
            request.build_absolute_uri(reverse("mcp")), made[1] if made else "<your token>"
        ),
    }
    return render(request, "sessions/tokens.html", context, status=400 if form.errors else 200)


def mcp_client_config(url: str, token: str) -> str:
    """An `mcpServers` entry an MCP client (Claude Code, Cursor…) takes as it is."""
    server = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
    return json.dumps({"mcpServers": {"control-tower": server}}, indent=2)


@action("tokens/<int:token_id>/revoke", "token_revoke")
def token_revoke(request, token_id):
    if not tokens.revoke(request.user, token_id):
        raise Http404("No such token.")
    return redirect("tokens")
