"""Webhook subscriptions' rows: their removal and locks, and the delivery log and cursor
the worker keeps (operational state: nothing about a session is derived from it)."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet

from sessions.models import Person, Subscription


def remove_subscription(subscription: Subscription) -> None:
    """Remove a subscription and its delivery log. Its row is locked first, so that the
    worker cannot log a delivery for it between the log's removal and the row's (that
    would fail the removal on the log's foreign key)."""
    with transaction.atomic():
        rows = Subscription.objects.filter(pk=subscription.pk)
        _lock(rows)
        rows.delete()


def _lock(rows: QuerySet) -> None:
    """Lock these rows until the transaction ends."""
    list(rows.select_for_update().values_list("pk", flat=True))


def lock_subscriptions_of(sender: type, instance: Person, **kwargs: object) -> None:
    """Before a person is deleted (with their subscriptions, by cascade): lock their
    subscriptions' rows, as `remove` does, so that the worker cannot log a delivery
    between the cascade's removal of the log and of the subscriptions."""
    _lock(Subscription.objects.filter(owner=instance))


def move_cursor(subscription: Subscription, position: int) -> None:
    Subscription.objects.filter(pk=subscription.pk, cursor__lt=position).update(cursor=position)
    subscription.cursor = max(subscription.cursor, position)


def create_within(owner: Person, most: int, **fields: object) -> Subscription | None:
    """A new subscription of `owner`'s, unless they have `most` already (None). The
    owner's row is locked while counting, so racing requests cannot pass the cap."""
    with transaction.atomic():
        _lock(get_user_model().objects.filter(pk=owner.pk))
        if Subscription.objects.filter(owner=owner).count() >= most:
            return None
        return Subscription.objects.create(owner=owner, **fields)


def live_ids() -> set[int]:
    """The ids of the subscriptions the worker follows: those whose owner is active."""
    return set(Subscription.objects.filter(owner__is_active=True).values_list("pk", flat=True))


def live(subscription_id: int) -> Subscription | None:
    """The subscription, if it is there and its owner active."""
    return Subscription.objects.filter(owner__is_active=True, pk=subscription_id).first()


def _managed_by(user: Person) -> QuerySet:
    rows = Subscription.objects.select_related("owner")
    return rows if user.is_superuser else rows.filter(owner=user)


def managed_by(user: Person) -> list[Subscription]:
    """The subscriptions a person manages, newest first: their own; a superuser's,
    everyone's."""
    return list(_managed_by(user))


def managed_one(user: Person, subscription_id: int) -> Subscription | None:
    """One of the subscriptions `user` manages, or None."""
    return _managed_by(user).filter(pk=subscription_id).first()
