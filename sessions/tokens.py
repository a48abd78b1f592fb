"""API tokens: made once and shown once, stored as a SHA-256 digest and a short prefix."""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from .models import ApiToken, aware_utc

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


def _user_sql():
    users = connection.ops.quote_name(get_user_model()._meta.db_table)
    tokens = connection.ops.quote_name(ApiToken._meta.db_table)
    return (
        f"SELECT u.*, t.id AS token_id, t.last_used_at AS token_last_used FROM {users} u"
        f" JOIN {tokens} t ON t.user_id = u.id"
        " WHERE t.digest = %s AND t.revoked_at IS NULL AND u.is_active"
    )


def user_for_token(token):
    """The active user a live token acts as, or None.

    Every API request runs this, so it is one fixed query (the ORM's select_related
    query took longer to build than to run).
    """
    user = next(iter(get_user_model().objects.raw(_user_sql(), [digest(token)])), None)
    if user is None:
        return None
    now = timezone.now()
    last_used = user.token_last_used
    if last_used is None or now - aware_utc(last_used) > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=user.token_id).update(last_used_at=now)
    return user
