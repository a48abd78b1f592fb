"""Sending one webhook request: a POST that follows no redirect, connects only where a
webhook may (`rules.addresses`) and raises nothing for a network failure, signed; and a
requested ping, sent and logged."""

import http.client
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.utils import timezone

from sessions.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    PING,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    USER_AGENT,
    signature,
)
from sessions.models import Delivery, Subscription
from sessions.rules import addresses
from sessions.store import deliveries
from sessions.webhooks.payloads import ping_body

# What is kept of a failed try's explanation (the column's length).
ERROR_MAX = Delivery._meta.get_field("error").max_length


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no HTTP answer at all
    error: str = ""

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is not a delivery: a 3xx is reported, not followed."""

    def redirect_request(self, *args, **kwargs) -> None:
        return None


class _GuardedHTTPConnection(http.client.HTTPConnection):
    """Connects only to an address a webhook may reach, checked as it connects."""

    def connect(self) -> None:
        self.sock = addresses.guarded_connection(self.host, self.port, self.timeout)


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        sock = addresses.guarded_connection(self.host, self.port, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class _GuardedHTTP(urllib.request.HTTPHandler):
    def http_open(self, request: urllib.request.Request):
        return self.do_open(_GuardedHTTPConnection, request)


class _GuardedHTTPS(urllib.request.HTTPSHandler):
    def https_open(self, request: urllib.request.Request):
        return self.do_open(_GuardedHTTPSConnection, request, context=self._context)


# No proxy from the environment (a proxy would connect for us, past the address check),
# no redirect, and every connection through the address check.
_opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({}), _NoRedirects, _GuardedHTTP, _GuardedHTTPS
)


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
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        DELIVERY_HEADER: delivery,
        EVENT_HEADER: kind,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(subscription.secret, timestamp, body),
    }
    return post(subscription.url, body, headers, timeout)


def send_ping(ping: Delivery, timeout: float) -> None:
    """Send a requested ping once and log what came back on its row."""
    subscription = ping.subscription
    answer = send(
        subscription, ping_body(subscription, timezone.now()), ping.delivery_id, PING, timeout
    )
    deliveries.log_ping(ping, answer.status, answer.error, answer.delivered)
