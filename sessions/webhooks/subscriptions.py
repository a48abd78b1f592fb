"""Subscriptions a person manages: made with a fresh secret, listed, removed."""

import secrets

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet

from sessions import config
from sessions.models import Delivery, Subscription
from sessions.readmodels import open_sessions
from sessions.rules.refusals import Refused
from sessions.store import subscriptions as stored
from sessions.webhooks import addresses


class TooManyWebhooks(Refused):
    code = "too_many_webhooks"

    def __init__(self, most: int) -> None:
        super().__init__(
            f"You have {most} webhooks, the most one person may have (WEBHOOKS_PER_USER):"
            " remove one before adding another.",
        )


class UnsafeWebhookUrl(Refused):
    code = "unsafe_webhook_url"


def subscribe(owner: AbstractBaseUser, url: str, payload: str, **filters: str) -> Subscription:
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


def live_subscriptions() -> QuerySet:
    """The subscriptions the worker follows: those whose owner is active. A deactivated
    person's webhooks stop at the worker's next rescan (a second by default), their
    cursor kept; they resume from it if the person is made active again."""
    return Subscription.objects.filter(owner__is_active=True)


def visible_subscriptions(user):
    """The subscriptions a person manages: their own; a superuser's, everyone's."""
    rows = Subscription.objects.select_related("owner")
    return rows if user.is_superuser else rows.filter(owner=user)


def recent_deliveries(subscription: Subscription, count: int = 10) -> list[Delivery]:
    return list(subscription.deliveries.all()[:count])
