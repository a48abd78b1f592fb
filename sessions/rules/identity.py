"""What identity an actor is: a username, for good.

Events name their actor by username (text, never a foreign key), so history needs no
user row and survives anything done to users. For that name to keep meaning one
person, a username that has appended events is never handed to anyone else: such a
user can be deactivated, but not deleted or renamed. (A user who never acted may be.)
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser

from sessions import store
from sessions.store import users


class IdentityInUse(Exception):
    """Deleting or renaming this user would hand their history to a future namesake."""


def has_acted(username: str) -> bool:
    return store.has_acted(username)


def refuse_delete(sender: type, instance: AbstractBaseUser, **kwargs: object) -> None:
    username = instance.get_username()
    if has_acted(username):
        raise IdentityInUse(
            f"{username} has appended events, so the name must stay theirs: "
            "deactivate the user instead of deleting them."
        )


def refuse_rename(sender: type, instance: AbstractBaseUser, **kwargs: object) -> None:
    if instance._state.adding or instance.pk is None:
        return
    old = users.stored_username(sender, instance.pk)
    if old is not None and old != instance.get_username() and has_acted(old):
        raise IdentityInUse(f"{old} has appended events, so the name cannot change.")


def connect() -> None:
    from django.db.models.signals import pre_delete, pre_save

    user_model = get_user_model()
    pre_delete.connect(refuse_delete, sender=user_model, dispatch_uid="tower-refuse-delete")
    pre_save.connect(refuse_rename, sender=user_model, dispatch_uid="tower-refuse-rename")
