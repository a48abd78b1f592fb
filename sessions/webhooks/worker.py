"""Webhooks: subscriptions a person manages, and the worker that delivers the feed to them.

Each subscription is followed by a thread of its own (`Follower`), so a slow or dead
endpoint holds back only its own deliveries. A follower reads the feed after the
subscription's cursor (`feed_model.feed`, so it never misses or repeats an event) and POSTs
each matching event, retrying the same event with exponential backoff until it is
answered with a 2xx; only then does the cursor move past it. Delivery is therefore at
least once and in order: a worker killed after a POST but before the cursor moved sends
that event again, under the same `X-Tower-Delivery` id, for the receiver to deduplicate.

Subscriptions, cursors and deliveries are operational state: nothing about a session is
ever derived from them.
"""

import logging
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.utils import timezone

from sessions.domain.records import EventRecord
from sessions.models import Delivery, Subscription
from sessions.readmodels import feed as feed_model
from sessions.readmodels import open_sessions
from sessions.store import connections
from sessions.store import subscriptions as stored
from sessions.webhooks.payloads import delivery_id, event_body
from sessions.webhooks.subscriptions import live_subscriptions
from sessions.webhooks.transport import pending_pings, send, send_ping

log = logging.getLogger(__name__)


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
    ping_threads: int = 4  # pings people asked for, sent at once
    ping_timeout_seconds: float = 5.0


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
                subscription = live_subscriptions().filter(pk=self.subscription_id).first()
                if subscription is None or not self._follow(subscription):
                    return
        except Exception:
            # The supervisor starts a new follower on its next round.
            log.exception("webhook %s: the follower stopped", self.subscription_id)
        finally:
            connections.close()

    def _follow(self, subscription: Subscription) -> bool:
        """Deliver one page of the feed; False when told to stop or the subscription is gone."""
        page = self.pace.page
        found, next_after = feed_model.feed(subscription.cursor, page, **subscription.filters)
        delivered: list[Delivery] = []
        whole = True
        try:
            for position, event in found:
                if self.stopping.is_set() or not self._deliver(
                    subscription, position, event, delivered
                ):
                    whole = False
                    break
        finally:
            kept = stored.log_delivered(subscription, delivered, self.pace.keep_deliveries)
        if not (whole and kept):
            return False
        if next_after > subscription.cursor:
            # Rows the filters skipped: nothing of them is owed.
            stored.move_cursor(subscription, next_after)
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
            if not stored.log_delivered(subscription, delivered, self.pace.keep_deliveries):
                return False
            if not stored.log_failure(
                subscription, position, identity, tries, answer.status, answer.error
            ):
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
            if not live_subscriptions().filter(pk=subscription.pk).exists():
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
    wanted = set(live_subscriptions().values_list("pk", flat=True))
    for pk, follower in list(followers.items()):
        if pk not in wanted or not follower.is_alive():
            follower.stop()
            del followers[pk]
    for pk in wanted - followers.keys():
        followers[pk] = Follower(pk, pace, feed_end)
        followers[pk].start()


class Pinger:
    """Sends the pings people ask for on the webhooks page, a few at once in threads of
    their own, so that neither a page nor the followers wait on a remote host."""

    def __init__(self, pace: Pace) -> None:
        self.pace = pace
        self.pool = ThreadPoolExecutor(pace.ping_threads, thread_name_prefix="webhook-ping")
        self.in_flight: set[int] = set()
        self.lock = threading.Lock()

    def send_pending(self) -> None:
        """Hand the oldest pending pings not already on their way to free threads."""
        with self.lock:
            busy = set(self.in_flight)
        room = self.pace.ping_threads - len(busy)
        if room <= 0:
            return
        waiting = pending_pings(self.pace.ping_threads + len(busy))
        for ping in [p for p in waiting if p.pk not in busy][:room]:
            with self.lock:
                self.in_flight.add(ping.pk)
            self.pool.submit(self._send, ping)

    def _send(self, ping: Delivery) -> None:
        try:
            send_ping(ping, self.pace.ping_timeout_seconds)
        except Exception:
            log.exception("webhook %s: the ping could not be sent", ping.subscription_id)
        finally:
            with self.lock:
                self.in_flight.discard(ping.pk)
            connections.close()

    def stop(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def deliver_until(stopped: threading.Event, pace: Pace) -> None:
    """Keep one follower running per subscription until `stopped` is set: start one for
    each new subscription (or for one whose follower died), stop those removed; and tell
    them where the feed ends."""
    followers: dict[int, Follower] = {}
    feed_end = FeedEnd()
    pinger = Pinger(pace)
    rescanned_at = -math.inf
    try:
        while True:
            try:
                with connections.unavailable_on_fault():
                    if time.monotonic() - rescanned_at >= pace.rescan_seconds:
                        rescanned_at = time.monotonic()
                        _rescan(followers, pace, feed_end)
                    feed_end.move_to(open_sessions.safe_position())
                    pinger.send_pending()
            except connections.DatabaseUnavailable:
                # The database is away for a moment: the followers keep trying too.
                log.exception("webhooks: the worker could not read the database")
            if stopped.wait(pace.poll_seconds):
                return
    finally:
        for follower in followers.values():
            follower.stop()
        for follower in followers.values():
            follower.join(timeout=pace.timeout_seconds + 1)
        pinger.stop()
        connections.close()
