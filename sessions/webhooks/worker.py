"""Webhooks: the worker that delivers the feed to every subscription.

A fixed pool of delivery threads (`Pace.threads`) serves every subscription, however many
there are. Each subscription is a lane (`Lane`) that one thread at a time takes for a
step (`Dispatcher.step`): it reads a page of the feed after the subscription's cursor
(`feed_model.feed`, so it never misses or repeats an event) and POSTs each matching
event in order. An event not answered with a 2xx ends the step; the lane waits out an
exponential backoff before it is taken again for that same event, and only delivered
events move the cursor. Delivery is therefore at least once and in order: a worker
killed mid-page sends the page's delivered events again, under the same
`X-Tower-Delivery` ids, for the receiver to deduplicate. A slow endpoint holds one thread
for at most a timeout per step and then backs off, while the other lanes go on.

So the worker's threads, and its database connections (one per thread at most, and the
supervisor's), stay bounded whatever the number of subscriptions.

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
from sessions.store import connections, deliveries
from sessions.store import subscriptions as stored
from sessions.webhooks.payloads import delivery_id, event_body
from sessions.webhooks.transport import send, send_ping

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pace:
    """How the worker paces itself; `manage.py deliver` takes each as an option."""

    poll_seconds: float = 0.1  # how often the worker asks where the feed ends
    rescan_seconds: float = 1.0  # how often it looks for added and removed subscriptions
    first_retry_seconds: float = 1.0  # the wait after a first failed try, doubled each time
    max_retry_seconds: float = 300.0
    timeout_seconds: float = 10.0  # connect and read, per POST
    page: int = 100  # events read from the feed at once
    keep_deliveries: int = 1000  # log rows kept per subscription (the newest events')
    threads: int = 8  # delivery threads, whatever the number of subscriptions
    ping_threads: int = 4  # pings people asked for, sent at once
    ping_timeout_seconds: float = 5.0


@dataclass
class Lane:
    """One subscription's place in the worker: when it may next be taken, and why."""

    subscription_id: int
    due: float = 0.0  # time.monotonic() from which it may be taken
    running: bool = False
    caught_up_at: int | None = None  # the feed's end when it last found nothing to send
    failing_position: int | None = None  # the event being tried again, its tries, its wait
    tries: int = 0
    retry_wait: float = 0.0
    last_status: int | None = None  # the last try's answer


class Dispatcher:
    """Hands the lanes that have work to a fixed pool of delivery threads."""

    def __init__(self, pace: Pace) -> None:
        self.pace = pace
        self.lanes: dict[int, Lane] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.pool = ThreadPoolExecutor(pace.threads, thread_name_prefix="webhook")

    def rescan(self) -> None:
        """Take on new live subscriptions; forget removed ones and those of deactivated
        people (a step in flight finishes, and the next finds them gone)."""
        wanted = stored.live_ids()
        with self.lock:
            for pk in self.lanes.keys() - wanted:
                del self.lanes[pk]
            for pk in wanted - self.lanes.keys():
                self.lanes[pk] = Lane(pk)

    def dispatch(self, feed_end: int) -> None:
        """Start a step for each free lane that has work: the feed moved past where it
        caught up, or its backoff is over."""
        now = time.monotonic()
        with self.lock:
            ready = [
                lane
                for lane in self.lanes.values()
                if not lane.running
                and lane.due <= now
                and (lane.caught_up_at is None or feed_end > lane.caught_up_at)
            ]
            for lane in ready:
                lane.running = True
        for lane in ready:
            self.pool.submit(self.step, lane)

    def step(self, lane: Lane) -> None:
        try:
            subscription = stored.live(lane.subscription_id)
            if subscription is not None and not self.stopping.is_set():
                self._deliver_page(subscription, lane)
        except Exception:
            log.exception("webhook %s: a delivery step failed", lane.subscription_id)
            lane.due = time.monotonic() + self.pace.first_retry_seconds
        finally:
            lane.running = False

    def _deliver_page(self, subscription: Subscription, lane: Lane) -> None:
        """Send a page of the feed after the cursor, in order, up to the first event not
        answered with a 2xx; then the bookkeeping of what was delivered, in one commit."""
        found, next_after = feed_model.feed(
            subscription.cursor, self.pace.page, **subscription.filters
        )
        delivered: list[Delivery] = []
        try:
            for position, event in found:
                if self.stopping.is_set() or not self._try(subscription, lane, position, event):
                    return
                delivered.append(self._delivered(subscription, lane, position))
        finally:
            deliveries.log_delivered(subscription, delivered, self.pace.keep_deliveries)
        if next_after > subscription.cursor:
            # Rows the filters skipped: nothing of them is owed.
            stored.move_cursor(subscription, next_after)
        lane.caught_up_at = None if found else next_after

    def _try(
        self, subscription: Subscription, lane: Lane, position: int, event: EventRecord
    ) -> bool:
        """One try of one event; on a failure, log it and set the lane's backoff."""
        if lane.failing_position != position:
            lane.failing_position, lane.tries = position, 0
            lane.retry_wait = self.pace.first_retry_seconds
        lane.tries += 1
        identity = delivery_id(subscription, position)
        body = event_body(subscription, position, event)
        answer = send(subscription, body, identity, event.type, self.pace.timeout_seconds)
        lane.last_status = answer.status
        if answer.delivered:
            return True
        deliveries.log_failure(
            subscription, position, identity, lane.tries, answer.status, answer.error
        )
        log.warning(
            "webhook %s: event %s not delivered (%s); next try in %g s",
            subscription.pk,
            position,
            answer.error,
            lane.retry_wait,
        )
        lane.due = time.monotonic() + lane.retry_wait
        lane.retry_wait = min(lane.retry_wait * 2, self.pace.max_retry_seconds)
        return False

    def _delivered(self, subscription: Subscription, lane: Lane, position: int) -> Delivery:
        now = timezone.now()
        row = Delivery(
            subscription=subscription,
            position=position,
            delivery_id=delivery_id(subscription, position),
            attempts=lane.tries,
            status=lane.last_status,
            last_tried_at=now,
            delivered_at=now,
        )
        lane.failing_position = None
        return row

    def stop(self, timeout: float) -> None:
        self.stopping.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + timeout
        while any(lane.running for lane in self.lanes.values()) and time.monotonic() < deadline:
            time.sleep(0.05)


class Pinger:
    """Sends the pings people ask for on the webhooks page, a few at once in threads of
    their own, so that neither a page nor a delivery waits on a remote host."""

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
        waiting = deliveries.pending_pings(self.pace.ping_threads + len(busy))
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
    """Deliver until `stopped` is set: look for added and removed subscriptions every
    `rescan_seconds`, ask where the feed ends every `poll_seconds` (once for all the
    subscriptions) and hand the lanes with work to the delivery threads, and the pings
    people asked for to the ping threads."""
    dispatcher = Dispatcher(pace)
    pinger = Pinger(pace)
    rescanned_at = -math.inf
    try:
        while True:
            try:
                with connections.unavailable_on_fault():
                    if time.monotonic() - rescanned_at >= pace.rescan_seconds:
                        rescanned_at = time.monotonic()
                        dispatcher.rescan()
                    dispatcher.dispatch(open_sessions.safe_position())
                    pinger.send_pending()
            except connections.DatabaseUnavailable:
                # The database is away for a moment: the next round tries again.
                log.exception("webhooks: the worker could not read the database")
            if stopped.wait(pace.poll_seconds):
                return
    finally:
        dispatcher.stop(timeout=pace.timeout_seconds + 1)
        pinger.stop()
        connections.close()
