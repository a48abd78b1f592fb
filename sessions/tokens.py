"""API tokens: made once and shown once, stored as a SHA-256 digest and a short prefix."""

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from .models import ApiToken

SCHEME = "ct_"
PREFIX_LENGTH = len(SCHEME) + 8
# Recording every use would turn each API read into a write; once a minute is enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def digest(token):
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user, name):
    """Make a token for `user`; returns the stored row and the token, which is not kept."""
    token = SCHEME + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, name=name, prefix=token[:PREFIX_LENGTH], digest=digest(token)
    )
    return row, token


def user_for_token(token):
    """The active user a live token acts as, or None."""
    row = (
        ApiToken.objects.select_related("user")
        .filter(digest=digest(token), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user
