"""API tokens' rows: the lookup every API request makes (a token's digest to its active
user), and the rows a person manages (made, listed, revoked)."""

import functools
from datetime import datetime
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Field, QuerySet
from django.utils import timezone

from sessions.models import ApiToken, Person
from sessions.store.database import moment_read, run_prepared

_FLAGS = ("is_active", "is_staff", "is_superuser")


@functools.cache
def _user_query(vendor: str, user_model: type[Person]) -> tuple[str, list[str]]:
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
    # On SQLite, what needs no converter is read as an expression (`+column`, the value as
    # it is): the sqlite3 module then looks none up on every run, and the moments are
    # parsed in C (`moment_read`). The flags keep their column, and so Django's converter.
    plain = "+" if vendor == "sqlite" else ""

    def column(field: Field) -> str:
        read_as = "" if field.get_internal_type() == "BooleanField" else plain
        return f"{read_as}u.{quote(field.column)}"

    columns = ", ".join(map(column, fields))
    token_user, user_key = ApiToken._meta.get_field("user").column, meta.pk.column
    sql = (
        f"SELECT {plain}t.id, {plain}t.last_used_at, {plain}t.scope, {plain}t.expires_at,"
        f" {columns}"
        f" FROM {quote(meta.db_table)} u"
        f" JOIN {quote(ApiToken._meta.db_table)} t ON t.{quote(token_user)} = u.{quote(user_key)}"
        " WHERE t.digest = %s AND t.revoked_at IS NULL"
    )
    if "is_active" in concrete:
        sql += f" AND u.{quote(meta.get_field('is_active').column)}"
    return sql, [f.attname for f in fields]


class TokenRow(NamedTuple):
    id: int
    last_used_at: datetime | None
    scope: str
    expires_at: datetime | None
    user: Person


def token_user(digest: str) -> TokenRow | None:
    """The unrevoked token with this digest and its active user, or None (an expired
    one too: the caller says when it expired).

    Every API request runs this, so it is one fixed query, prepared (`run_prepared`), and
    the user is built with `from_db` from the fields a request needs (the ORM's
    select_related query took longer to build than to run; a raw queryset still cost a
    tenth of an append request, bench/RESULTS.md §2).
    """
    user_model = get_user_model()
    sql, fields = _user_query(connection.vendor, user_model)
    rows = run_prepared(sql, [digest])
    if not rows:
        return None
    token_id, last_used, scope, expires_at, *values = rows[0]
    user = user_model.from_db(connection.alias, fields, values)
    return TokenRow(
        token_id,
        None if last_used is None else moment_read(last_used),
        scope,
        None if expires_at is None else moment_read(expires_at),
        user,
    )


def create(**fields: object) -> ApiToken:
    """A new token row (`rules.tokens.create_token` makes its secret parts)."""
    return ApiToken.objects.create(**fields)


def _managed_by(user: Person) -> QuerySet[ApiToken]:
    rows = ApiToken.objects.select_related("user")
    return rows if user.is_superuser else rows.filter(user=user)


def managed_by(user: Person) -> list[ApiToken]:
    """The tokens a person manages, newest first: their own; a superuser's, everyone's."""
    return list(_managed_by(user))


def revoke(user: Person, token_id: int) -> bool:
    """Revoke one of the tokens `user` manages (again is harmless); False when there is
    no such token among them."""
    found = _managed_by(user).filter(pk=token_id)
    if not found.exists():
        return False
    found.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
    return True


def record_use(token_id: int, now: datetime) -> None:
    ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
