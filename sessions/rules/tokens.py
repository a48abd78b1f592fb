"""API tokens: made once and shown once, stored as a SHA-256 digest and a short prefix."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from sessions import config
from sessions.models import ApiToken, Person
from sessions.store import tokens as stored

SCHEME = "ct_"
PREFIX_LENGTH = len(SCHEME) + 8
# Recording every use would turn each API read into a write; once a minute is enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


READ, WRITE = "read", "write"
# The lifetimes offered on the Tokens page, in days (None: no end); the default first.
EXPIRY_CHOICES = (90, 30, 365, None)


def create_token(
    user: Person,
    name: str,
    read_only: bool = False,
    expires_in_days: int | None = None,
) -> tuple[ApiToken, str]:
    """Make a token for `user`; returns the stored row and the token, which is not kept.
    `read_only` tokens may only read; one with `expires_in_days` stops working then.
    `ForgeUserRefused` for the forge integration's user, as signing in is."""
    if is_forge_user(user):
        raise ForgeUserRefused
    token = SCHEME + secrets.token_urlsafe(32)
    expires_at = None
    if expires_in_days is not None:
        expires_at = timezone.now() + timedelta(days=expires_in_days)
    row = stored.create(
        user=user,
        name=name,
        prefix=token[:PREFIX_LENGTH],
        digest=digest(token),
        scope=READ if read_only else WRITE,
        expires_at=expires_at,
    )
    return row, token


@dataclass(frozen=True)
class Bearer:
    """Who a request's token acts as, and whether it may only read."""

    user: Person
    read_only: bool


READ_ONLY_REFUSAL = (
    "This token may only read (its scope is read): appending, claiming or amending needs"
    " a token with the write scope (Tokens page)."
)


class TokenRefused(Exception):
    """An Authorization header that names no bearer who may act: `code` for programs,
    `detail` for people."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code, self.detail = code, detail


class TokenExpired(TokenRefused):
    def __init__(self, expired_at: datetime) -> None:
        super().__init__(
            "token_expired",
            f"The token expired at {expired_at:%Y-%m-%d %H:%M} UTC; make a new one on the"
            " Tokens page.",
        )
        self.expired_at = expired_at


class ForgeUserRefused(TokenRefused):
    """A token of the forge integration's user (`GITHUB_ACTOR`), which may append work
    and a merge's close to any session: only GitHub's signed deliveries act as it."""

    def __init__(self) -> None:
        super().__init__(
            "forge_user",
            f"No token may act as {config.current().github_actor!r}, the GitHub integration's user:"
            " only GitHub's signed deliveries do (it can never sign in either).",
        )


def is_forge_user(user: Person) -> bool:
    return user.get_username() == config.current().github_actor


def visible_tokens(user: Person) -> list[ApiToken]:
    """The tokens a person manages: their own; a superuser's, everyone's."""
    return stored.managed_by(user)


def revoke(user: Person, token_id: int) -> bool:
    """Revoke one of the tokens `user` manages (again is harmless); False when there is
    no such token among them."""
    return stored.revoke(user, token_id)


def bearer_for_token(token: str) -> Bearer | None:
    """Who a live token acts as (an active user) and with which scope; None for a token
    unknown, revoked or of a deactivated user; `TokenExpired` past its end,
    `ForgeUserRefused` for the forge's user. Every API
    request runs this: one prepared statement (`store.tokens.token_user`), and a write at most
    once a minute."""
    found = stored.token_user(digest(token))
    if found is None:
        return None
    now = timezone.now()
    if found.expires_at is not None and found.expires_at <= now:
        raise TokenExpired(found.expires_at)
    if is_forge_user(found.user):  # one made before this was refused
        raise ForgeUserRefused
    if found.last_used_at is None or now - found.last_used_at > LAST_USED_RESOLUTION:
        stored.record_use(found.id, now)
    return Bearer(found.user, found.scope == READ)


def bearer_of_header(header: str) -> Bearer:
    """The bearer an Authorization header names, for the API and /mcp alike;
    `TokenRefused` when it names none that may act (not a bearer token, unknown,
    revoked, of a deactivated user, or expired)."""
    scheme, _, token = header.partition(" ")
    bearer = bearer_for_token(token.strip()) if scheme.lower() == "bearer" else None
    if bearer is None:
        raise TokenRefused("unauthorized", "The bearer token is missing, unknown or revoked.")
    return bearer
