"""API tokens: made once and shown once, stored as a SHA-256 digest and a short prefix."""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from sessions import store
from sessions.models import ApiToken

SCHEME = "ct_"
PREFIX_LENGTH = len(SCHEME) + 8
# Recording every use would turn each API read into a write; once a minute is enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Make a token for `user`; returns the stored row and the token, which is not kept."""
    token = SCHEME + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, name=name, prefix=token[:PREFIX_LENGTH], digest=digest(token)
    )
    return row, token


def visible_tokens(user: AbstractBaseUser) -> QuerySet:
    """The tokens a person manages: their own; a superuser's, everyone's."""
    rows = ApiToken.objects.select_related("user")
    return rows if user.is_superuser else rows.filter(user=user)


def revoke(user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke one of the tokens `user` manages (again is harmless); False when there is
    no such token among them."""
    found = visible_tokens(user).filter(pk=token_id)
    if not found.exists():
        return False
    found.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
    return True


def user_for_token(token: str) -> AbstractBaseUser | None:
    """The active user a live token acts as, or None. Every API request runs this: one
    prepared statement (`store.token_user`), and a write at most once a minute."""
    found = store.token_user(digest(token))
    if found is None:
        return None
    token_id, last_used, user = found
    now = timezone.now()
    if last_used is None or now - last_used > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    return user
