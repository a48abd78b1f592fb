"""The webhook delivery log: one row per event (or ping) sent to a subscription, what
its last try got, and the pings people asked for (operational state: nothing about a
session is derived from it)."""

import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone

from sessions.models import Delivery, Subscription
from sessions.store.subscriptions import move_cursor


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
            last = delivered[-1].position  # (a delivered event always has its position)
            if last is not None:
                move_cursor(subscription, last)
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


def request_ping(subscription: Subscription, kind: str) -> Delivery:
    """A ping asked for: a row without a position and without a try yet, which the
    worker sends and logs (`log_ping`)."""
    return Delivery.objects.create(
        subscription=subscription,
        delivery_id=f"{subscription.pk}-{kind}-{secrets.token_hex(4)}",
        attempts=0,
        last_tried_at=timezone.now(),
    )


def pending_pings(limit: int) -> list[Delivery]:
    """The pings asked for and not sent yet, oldest first, of live subscriptions."""
    rows = Delivery.objects.filter(
        position__isnull=True, attempts=0, subscription__owner__is_active=True
    )
    return list(rows.select_related("subscription").order_by("pk")[:limit])


def log_ping(ping: Delivery, status: int | None, error: str, delivered: bool) -> None:
    """What a sent ping got, on its row."""
    now = timezone.now()
    Delivery.objects.filter(pk=ping.pk).update(
        attempts=1,
        status=status,
        error=error,
        last_tried_at=now,
        delivered_at=now if delivered else None,
    )


def recent(subscription: Subscription, count: int) -> list[Delivery]:
    """The subscription's latest deliveries, newest first."""
    return list(subscription.deliveries.all()[:count])
