"""API tokens: made once and shown once, stored as a SHA-256 digest and a short prefix."""

import functools
import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from sessions.models import ApiToken
from sessions.store.database import aware_utc, run_prepared

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


def visible_tokens(user):
    """The tokens a person manages: their own; a superuser's, everyone's."""
    rows = ApiToken.objects.select_related("user")
    return rows if user.is_superuser else rows.filter(user=user)


def revoke(user, token_id) -> bool:
    """Revoke one of the tokens `user` manages (again is harmless); False when there is
    no such token among them."""
    found = visible_tokens(user).filter(pk=token_id)
    if not found.exists():
        return False
    found.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
    return True


_FLAGS = ("is_active", "is_staff", "is_superuser")


@functools.cache
def _user_query(vendor, user_model):
    """The token lookup's SQL and the user fields it reads: those an API request needs,
    in the model's field order (as `from_db` takes them); others load on first access.
    Every name comes from the user model's own metadata, so a custom user model works
    (one without `is_active` is active, as Django's `AbstractBaseUser` says). Built once
    per database kind: quoting is all that differs."""
    meta = user_model._meta
    concrete = {f.attname for f in meta.concrete_fields}
    wanted = {meta.pk.attname, user_model.USERNAME_FIELD, *(f for f in _FLAGS if f in concrete)}
    fields = [f for f in meta.concrete_fields if f.attname in wanted]
    quote = connection.ops.quote_name
    columns = ", ".join(f"u.{quote(f.column)}" for f in fields)
    token_user, user_key = ApiToken._meta.get_field("user").column, meta.pk.column
    sql = (
        f"SELECT t.id, t.last_used_at, {columns} FROM {quote(meta.db_table)} u"
        f" JOIN {quote(ApiToken._meta.db_table)} t ON t.{quote(token_user)} = u.{quote(user_key)}"
        " WHERE t.digest = %s AND t.revoked_at IS NULL"
    )
    if "is_active" in concrete:
        sql += f" AND u.{quote(meta.get_field('is_active').column)}"
    return sql, [f.attname for f in fields]


def user_for_token(token):
    """The active user a live token acts as, or None.

    Every API request runs this, so it is one fixed query, prepared (`run_prepared`), and
    the user is built with `from_db` from the fields a request needs (the ORM's
    select_related query took longer to build than to run; a raw queryset still cost a
    tenth of an append request, bench/RESULTS.md §2).
    """
    user_model = get_user_model()
    sql, fields = _user_query(connection.vendor, user_model)
    rows = run_prepared(sql, [digest(token)])
    if not rows:
        return None
    token_id, last_used, *values = rows[0]
    user = user_model.from_db(connection.alias, fields, values)
    now = timezone.now()
    if last_used is None or now - aware_utc(last_used) > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    return user
