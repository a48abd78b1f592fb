"""The user table, as far as the tower reads it itself: a user's stored username (the
rest is Django's auth, which the admin and the auth commands use as it is)."""

from django.contrib.auth.base_user import AbstractBaseUser


def stored_username(user_model: type[AbstractBaseUser], pk: object) -> str | None:
    """The username stored for the user `pk`, or None when there is no such row."""
    found = user_model._default_manager.filter(pk=pk).values_list(
        user_model.USERNAME_FIELD, flat=True
    )
    return next(iter(found), None)


def service_user(user_model: type[AbstractBaseUser], username: str) -> AbstractBaseUser:
    """The user `username`, made on first use with no usable password: an integration's
    own, which appends events and can never sign in."""
    user, made = user_model._default_manager.get_or_create(**{user_model.USERNAME_FIELD: username})
    if made:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user
