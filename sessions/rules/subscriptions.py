"""Webhook subscriptions a person manages: made with a fresh secret (only to addresses a
webhook may reach, `addresses`), listed, pinged, removed. Their rows are the store's
(`store.subscriptions`, `store.deliveries`); the worker that sends is `sessions.webhooks`."""

import secrets

from sessions import config
from sessions.domain import webhooks
from sessions.models import Delivery, Person, Subscription
from sessions.readmodels import open_sessions
from sessions.rules import addresses
from sessions.rules.refusals import Refused
from sessions.store import deliveries
from sessions.store import subscriptions as stored


class TooManyWebhooks(Refused):
    code = "too_many_webhooks"

    def __init__(self, most: int) -> None:
        super().__init__(
            f"You have {most} webhooks, the most one person may have (WEBHOOKS_PER_USER):"
            " remove one before adding another.",
        )


class UnsafeWebhookUrl(Refused):
    code = "unsafe_webhook_url"


def subscribe(owner: Person, url: str, payload: str, **filters: str) -> Subscription:
    """A new subscription with a fresh secret. It hears of events from now on: its cursor
    starts at the feed's current position, not at the beginning of history. Refused
    (`TooManyWebhooks`) past `WEBHOOKS_PER_USER`: each is a thread of the worker; and
    (`UnsafeWebhookUrl`) when the URL points inside the server's network."""
    why = addresses.url_refusal(url)
    if why:
        raise UnsafeWebhookUrl(why)
    most = config.current().webhooks_per_user
    made = stored.create_within(
        owner,
        most,
        url=url,
        payload=payload,
        secret=secrets.token_hex(32),
        cursor=open_sessions.safe_position(),
        **filters,
    )
    if made is None:
        raise TooManyWebhooks(most)
    return made


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


def visible_subscriptions(user: Person) -> list[Subscription]:
    """The subscriptions a person manages: their own; a superuser's, everyone's."""
    return stored.managed_by(user)


def visible_subscription(user: Person, subscription_id: int) -> Subscription | None:
    """One of the subscriptions `user` manages, or None."""
    return stored.managed_one(user, subscription_id)


def recent_deliveries(subscription: Subscription, count: int = 10) -> list[Delivery]:
    return deliveries.recent(subscription, count)


def request_ping(subscription: Subscription) -> Delivery:
    """Ask the worker to ping: a delivery row it sends and logs, which the page shows
    when it is answered. No request waits on a remote host."""
    return deliveries.request_ping(subscription, webhooks.PING)
