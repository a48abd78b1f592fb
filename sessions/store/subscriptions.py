"""Webhook subscriptions' rows: their removal and locks, and the delivery log and cursor
the worker keeps (operational state: nothing about a session is derived from it)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from sessions.models import Delivery, Subscription


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


def lock_subscriptions_of(sender: type, instance: AbstractBaseUser, **kwargs: object) -> None:
    """Before a person is deleted (with their subscriptions, by cascade): lock their
    subscriptions' rows, as `remove` does, so that the worker cannot log a delivery
    between the cascade's removal of the log and of the subscriptions."""
    _lock(Subscription.objects.filter(owner=instance))


def log_delivered(subscription: Subscription, delivered: list[Delivery], keep: int) -> bool:
    """Log a run of delivered events and move the cursor past them, in one transaction:
    the bookkeeping costs one commit per run, not per event. A worker killed before it
    sends them again (at least once). The log keeps the `keep` newest events' rows.
    False when the subscription is gone."""
    if not delivered:
        return True
    try:
        with transaction.atomic():
            Delivery.objects.bulk_create(
                delivered,
                update_conflicts=True,  # an event whose failed tries were logged
                unique_fields=["subscription", "position"],
                update_fields=["attempts", "status", "error", "last_tried_at", "delivered_at"],
            )
            move_cursor(subscription, delivered[-1].position)
            logged = subscription.deliveries.filter(position__isnull=False)
            oldest_kept = logged.order_by("-position").values("position")[keep - 1 : keep]
            logged.filter(position__lt=oldest_kept).delete()
    except IntegrityError:
        return False  # removed while we were sending
    delivered.clear()
    return True


def log_failure(
    subscription: Subscription,
    position: int,
    delivery_id: str,
    tries: int,
    status: int | None,
    error: str,
) -> bool:
    """Log a failed try at once, for the page to show. False when the subscription is gone."""
    try:
        Delivery.objects.update_or_create(
            subscription=subscription,
            position=position,
            defaults={
                "delivery_id": delivery_id,
                "attempts": tries,
                "status": status,
                "error": error,
                "last_tried_at": timezone.now(),
            },
        )
    except IntegrityError:
        return False
    return True


def move_cursor(subscription: Subscription, position: int) -> None:
    Subscription.objects.filter(pk=subscription.pk, cursor__lt=position).update(cursor=position)
    subscription.cursor = max(subscription.cursor, position)


def create_within(owner: AbstractBaseUser, most: int, **fields: object) -> Subscription | None:
    """A new subscription of `owner`'s, unless they have `most` already (None). The
    owner's row is locked while counting, so racing requests cannot pass the cap."""
    with transaction.atomic():
        _lock(get_user_model().objects.filter(pk=owner.pk))
        if Subscription.objects.filter(owner=owner).count() >= most:
            return None
        return Subscription.objects.create(owner=owner, **fields)
