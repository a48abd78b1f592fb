"""The user table, as far as the tower reads it itself: a user's stored username (the
rest is Django's auth, which the admin and the auth commands use as it is)."""

from typing import Any

from sessions.models import Person


def stored_username(user_model: type[Person], pk: int | str) -> str | None:
    """The username stored for the user `pk`, or None when there is no such row."""
    found = user_model._default_manager.filter(pk=pk).values_list(
        user_model.USERNAME_FIELD, flat=True
    )
    return next(iter(found), None)


def service_user(user_model: type[Person], username: str) -> Person:
    """The user `username`, made on first use with no usable password: an integration's
    own, which appends events and can never sign in."""
    named: dict[str, Any] = {user_model.USERNAME_FIELD: username}
    user, made = user_model._default_manager.get_or_create(**named)
    if made:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user
