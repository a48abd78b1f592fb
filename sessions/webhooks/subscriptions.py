"""Subscriptions a person manages: made with a fresh secret, listed, removed."""

import secrets

from sessions.models import Delivery, Subscription
from sessions.readmodels import open_sessions
from sessions.store import subscriptions as stored


def subscribe(owner, url: str, payload: str, **filters: str) -> Subscription:
    """A new subscription with a fresh secret. It hears of events from now on: its cursor
    starts at the feed's current position, not at the beginning of history."""
    return Subscription.objects.create(
        owner=owner,
        url=url,
        payload=payload,
        secret=secrets.token_hex(32),
        cursor=open_sessions.safe_position(),
        **filters,
    )


def remove(subscription: Subscription) -> None:
    """Remove a subscription and its delivery log (`store.subscriptions`)."""
    stored.remove_subscription(subscription)


def connect() -> None:
    from django.contrib.auth import get_user_model
    from django.db.models.signals import pre_delete

    pre_delete.connect(
        stored.lock_subscriptions_of,
        sender=get_user_model(),
        dispatch_uid="tower-lock-subscriptions",
    )


def visible_subscriptions(user):
    """The subscriptions a person manages: their own; a superuser's, everyone's."""
    rows = Subscription.objects.select_related("owner")
    return rows if user.is_superuser else rows.filter(owner=user)


def recent_deliveries(subscription: Subscription, count: int = 10) -> list[Delivery]:
    return list(subscription.deliveries.all()[:count])
