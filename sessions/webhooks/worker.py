"""Webhooks: subscriptions a person manages, and the worker that delivers the feed to them.

Each subscription is followed by a thread of its own (`Follower`), so a slow or dead
endpoint holds back only its own deliveries. A follower reads the feed after the
subscription's cursor (`reading.feed`, so it never misses or repeats an event) and POSTs
each matching event, retrying the same event with exponential backoff until it is
answered with a 2xx; only then does the cursor move past it. Delivery is therefore at
least once and in order: a worker killed after a POST but before the cursor moved sends
that event again, under the same `X-Tower-Delivery` id, for the receiver to deduplicate.

Subscriptions, cursors and deliveries are operational state: nothing about a session is
ever derived from them.
"""

import hashlib
import hmac
import http.client
import json
import logging
import math
import secrets
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from sessions.api import schemas
from sessions.domain import vocabulary
from sessions.domain.projections import EventRecord
from sessions.models import Delivery, Subscription
from sessions.readmodels import open_sessions, reading

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Tower-Signature-256"
DELIVERY_HEADER = "X-Tower-Delivery"
EVENT_HEADER = "X-Tower-Event"
PING = "ping"
USER_AGENT = "ControlTower-Webhooks/1"
# A ping is sent while its maker waits for the page.
PING_TIMEOUT_SECONDS = 5
# What is kept of a failed try's explanation (the column's length).
ERROR_MAX = Delivery._meta.get_field("error").max_length


@dataclass(frozen=True)
class Pace:
    """How the worker paces itself; `manage.py deliver` takes each as an option."""

    poll_seconds: float = 0.1  # how often the worker asks where the feed ends
    rescan_seconds: float = 1.0  # how often it looks for added and removed subscriptions
    first_retry_seconds: float = 1.0  # the wait after a first failed try, doubled each time
    max_retry_seconds: float = 300.0
    timeout_seconds: float = 10.0  # per POST
    page: int = 100  # events read from the feed at once
    keep_deliveries: int = 1000  # log rows kept per subscription (the newest events')


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no HTTP answer at all
    error: str = ""

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


# Managing subscriptions ---------------------------------------------------------------


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
    """Remove a subscription and its delivery log. Its row is locked first, so that the
    worker cannot log a delivery for it between the log's removal and the row's (that
    would fail the removal on the log's foreign key)."""
    with transaction.atomic():
        rows = Subscription.objects.filter(pk=subscription.pk)
        _lock(rows)
        rows.delete()


def _lock(subscriptions) -> None:
    """Lock these subscriptions' rows until the transaction ends."""
    list(subscriptions.select_for_update().values_list("pk", flat=True))


def lock_subscriptions_of(sender, instance, **kwargs) -> None:
    """Before a person is deleted (with their subscriptions, by cascade): lock their
    subscriptions' rows, as `remove` does, so that the worker cannot log a delivery
    between the cascade's removal of the log and of the subscriptions."""
    _lock(Subscription.objects.filter(owner=instance))


def connect() -> None:
    from django.contrib.auth import get_user_model
    from django.db.models.signals import pre_delete

    pre_delete.connect(
        lock_subscriptions_of, sender=get_user_model(), dispatch_uid="tower-lock-subscriptions"
    )


def visible_subscriptions(user):
    """The subscriptions a person manages: their own; a superuser's, everyone's."""
    rows = Subscription.objects.select_related("owner")
    return rows if user.is_superuser else rows.filter(owner=user)


def recent_deliveries(subscription: Subscription, count: int = 10) -> list[Delivery]:
    return list(subscription.deliveries.all()[:count])


# What is sent ---------------------------------------------------------------------------


def signature(secret: str, body: bytes) -> str:
    """The `X-Tower-Signature-256` header of `body`: its HMAC-SHA256 under `secret`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery_id(subscription: Subscription, position: int) -> str:
    """Stable across retries and restarts, so a receiver can drop a repeat."""
    return f"{subscription.pk}-{position}"


_SLACK_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

# What each event says its actor did to the session or plan (its title in bold).
_SLACK_DEEDS = {
    vocabulary.START: "started {title}",
    vocabulary.BLOCK: "blocked {title}",
    vocabulary.UNBLOCK: "unblocked {title}",
    vocabulary.REVIEW: "sent {title} to review",
    vocabulary.CLOSE: "closed {title}",
    vocabulary.PLAN_CREATE: "made the plan {title}",
    vocabulary.PLAN_AMEND: "amended the plan {title}",
}


def slack_text(event: EventRecord, title: str | None) -> str:
    """One line for a Slack channel, e.g. "agent-7 blocked *Fix flaky login test*: needs
    the CI secrets rotated". Slack's three control characters are escaped."""

    def plain(text: str) -> str:
        return text.translate(_SLACK_ESCAPES)

    named = f"*{plain(title or event.session)}*"
    line = f"{plain(event.actor)} {_SLACK_DEEDS[event.type].format(title=named)}"
    if event.outcome:
        line += f" ({event.outcome})"
    said = event.reason or event.note
    return f"{line}: {plain(said)}" if said else line


def event_body(subscription: Subscription, position: int, event: EventRecord) -> bytes:
    """The POSTed body: the feed's item, or for Slack a message naming the title."""
    if subscription.payload == Subscription.SLACK:
        title = event.title or reading.title(event.session)
        document = {"text": slack_text(event, title)}
    else:
        document = schemas.feed_item(position, event)
    return json.dumps(document, ensure_ascii=False).encode()


def ping_body(subscription: Subscription, now: datetime) -> bytes:
    if subscription.payload == Subscription.SLACK:
        document = {"text": f"Control Tower: webhook {subscription.pk} is set up for this channel."}
    else:
        document = {"type": PING, "subscription": subscription.pk, "sent_at": now.isoformat()}
    return json.dumps(document).encode()


# Sending ------------------------------------------------------------------------------


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is not a delivery: a 3xx is reported, not followed."""

    def redirect_request(self, *args, **kwargs) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST `body` once; what came back (no exception escapes for a network failure)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _opener.open(request, timeout=timeout) as response:
            response.read(65536)
            return Answer(response.status)
    except urllib.error.HTTPError as answered:
        answered.close()
        return Answer(answered.code, f"answered {answered.code} {answered.reason}"[:ERROR_MAX])
    except urllib.error.URLError as failed:
        return Answer(None, str(failed.reason)[:ERROR_MAX])
    except (OSError, http.client.HTTPException, ValueError) as failed:
        return Answer(None, (str(failed) or type(failed).__name__)[:ERROR_MAX])


def send(
    subscription: Subscription, body: bytes, delivery: str, kind: str, timeout: float
) -> Answer:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        DELIVERY_HEADER: delivery,
        EVENT_HEADER: kind,
        SIGNATURE_HEADER: signature(subscription.secret, body),
    }
    return post(subscription.url, body, headers, timeout)


def ping(subscription: Subscription) -> Delivery:
    """Send a ping now and log it as a delivery without a position."""
    now = timezone.now()
    delivery = f"{subscription.pk}-{PING}-{secrets.token_hex(4)}"
    answer = send(subscription, ping_body(subscription, now), delivery, PING, PING_TIMEOUT_SECONDS)
    return Delivery.objects.create(
        subscription=subscription,
        delivery_id=delivery,
        attempts=1,
        status=answer.status,
        error=answer.error,
        last_tried_at=now,
        delivered_at=now if answer.delivered else None,
    )


# The worker -------------------------------------------------------------------------


def _log_delivered(subscription: Subscription, delivered: list[Delivery], keep: int) -> bool:
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
            _move_cursor(subscription, delivered[-1].position)
            logged = subscription.deliveries.filter(position__isnull=False)
            oldest_kept = logged.order_by("-position").values("position")[keep - 1 : keep]
            logged.filter(position__lt=oldest_kept).delete()
    except IntegrityError:
        return False  # removed while we were sending
    delivered.clear()
    return True


def _log_failure(subscription: Subscription, position: int, tries: int, answer: Answer) -> bool:
    """Log a failed try at once, for the page to show. False when the subscription is gone."""
    try:
        Delivery.objects.update_or_create(
            subscription=subscription,
            position=position,
            defaults={
                "delivery_id": delivery_id(subscription, position),
                "attempts": tries,
                "status": answer.status,
                "error": answer.error,
                "last_tried_at": timezone.now(),
            },
        )
    except IntegrityError:
        return False
    return True


def _move_cursor(subscription: Subscription, position: int) -> None:
    Subscription.objects.filter(pk=subscription.pk, cursor__lt=position).update(cursor=position)
    subscription.cursor = max(subscription.cursor, position)


class Follower(threading.Thread):
    """Delivers one subscription's events, one at a time, in feed order."""

    def __init__(self, subscription_id: int, pace: Pace, feed_end: "FeedEnd") -> None:
        super().__init__(name=f"webhook-{subscription_id}", daemon=True)
        self.subscription_id = subscription_id
        self.pace = pace
        self.feed_end = feed_end
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()
        self.feed_end.wake()

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                subscription = Subscription.objects.filter(pk=self.subscription_id).first()
                if subscription is None or not self._follow(subscription):
                    return
        except Exception:
            # The supervisor starts a new follower on its next round.
            log.exception("webhook %s: the follower stopped", self.subscription_id)
        finally:
            connection.close()

    def _follow(self, subscription: Subscription) -> bool:
        """Deliver one page of the feed; False when told to stop or the subscription is gone."""
        page = self.pace.page
        found, next_after = reading.feed(subscription.cursor, page, **subscription.filters)
        delivered: list[Delivery] = []
        whole = True
        try:
            for position, event in found:
                if not self._deliver(subscription, position, event, delivered):
                    whole = False
                    break
        finally:
            kept = _log_delivered(subscription, delivered, self.pace.keep_deliveries)
        if not (whole and kept):
            return False
        if next_after > subscription.cursor:
            # Rows the filters skipped: nothing of them is owed.
            _move_cursor(subscription, next_after)
        if not found:
            # Caught up: wait for the feed to move on (or, to notice a removal, a while).
            self.feed_end.wait_past(subscription.cursor, self.pace.rescan_seconds, self.stopping)
        return not self.stopping.is_set()

    def _deliver(
        self,
        subscription: Subscription,
        position: int,
        event: EventRecord,
        delivered: list[Delivery],
    ) -> bool:
        """Send one event until it is answered with a 2xx, and add it to `delivered`.
        False when told to stop or the subscription is gone."""
        body = event_body(subscription, position, event)
        identity = delivery_id(subscription, position)
        wait = self.pace.first_retry_seconds
        tries = 0
        while True:
            tries += 1
            answer = send(subscription, body, identity, event.type, self.pace.timeout_seconds)
            if answer.delivered:
                now = timezone.now()
                delivered.append(
                    Delivery(
                        subscription=subscription,
                        position=position,
                        delivery_id=identity,
                        attempts=tries,
                        status=answer.status,
                        last_tried_at=now,
                        delivered_at=now,
                    )
                )
                return True
            # What was delivered before this event is logged before the wait.
            if not _log_delivered(subscription, delivered, self.pace.keep_deliveries):
                return False
            if not _log_failure(subscription, position, tries, answer):
                return False
            log.warning(
                "webhook %s: event %s not delivered (%s); next try in %g s",
                subscription.pk,
                position,
                answer.error,
                wait,
            )
            if self.stopping.wait(wait):
                return False
            if not Subscription.objects.filter(pk=subscription.pk).exists():
                return False
            wait = min(wait * 2, self.pace.max_retry_seconds)


class FeedEnd:
    """Where the feed ends, as the worker last asked: one question per poll for the whole
    worker, however many subscriptions it follows, and a caught-up follower wakes as
    soon as the feed moves on instead of sleeping through a fixed interval."""

    def __init__(self) -> None:
        self.position = 0
        self.moved = threading.Condition()

    def move_to(self, position: int) -> None:
        with self.moved:
            if position > self.position:
                self.position = position
                self.moved.notify_all()

    def wake(self) -> None:
        with self.moved:
            self.moved.notify_all()

    def wait_past(self, cursor: int, timeout: float, stopping: threading.Event) -> None:
        with self.moved:
            self.moved.wait_for(lambda: self.position > cursor or stopping.is_set(), timeout)


def _rescan(followers: dict[int, Follower], pace: Pace, feed_end: FeedEnd) -> None:
    wanted = set(Subscription.objects.values_list("pk", flat=True))
    for pk, follower in list(followers.items()):
        if pk not in wanted or not follower.is_alive():
            follower.stop()
            del followers[pk]
    for pk in wanted - followers.keys():
        followers[pk] = Follower(pk, pace, feed_end)
        followers[pk].start()


def deliver_until(stopped: threading.Event, pace: Pace) -> None:
    """Keep one follower running per subscription until `stopped` is set: start one for
    each new subscription (or for one whose follower died), stop those removed; and tell
    them where the feed ends."""
    followers: dict[int, Follower] = {}
    feed_end = FeedEnd()
    rescanned_at = -math.inf
    try:
        while True:
            try:
                if time.monotonic() - rescanned_at >= pace.rescan_seconds:
                    rescanned_at = time.monotonic()
                    _rescan(followers, pace, feed_end)
                feed_end.move_to(open_sessions.safe_position())
            except DatabaseError:
                # The database is away for a moment: the followers keep trying too.
                log.exception("webhooks: the worker could not read the database")
                connection.close()
            if stopped.wait(pace.poll_seconds):
                return
    finally:
        for follower in followers.values():
            follower.stop()
        for follower in followers.values():
            follower.join(timeout=pace.timeout_seconds + 1)
        connection.close()
