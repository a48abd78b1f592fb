"""Talking to the tower: where it is and who we are (`CT_URL`, `CT_TOKEN`, or what
`ct login` saved), and one JSON request at a time over HTTP, every failure turned into
one of two errors a person can read."""

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ct import environment, files

if TYPE_CHECKING:
    import http.client  # imported where a request is made: a hook starts without it

# Exit statuses (docs/rules.md, "The agent's side").
DONE, REFUSED, USAGE, NOT_ALLOWED, UNREACHABLE, TIMED_OUT = 0, 1, 2, 3, 4, 5


def new_key() -> str:
    """A fresh idempotency key (random, as `uuid4().hex` would be, without importing uuid)."""
    return os.urandom(16).hex()


class Refused(Exception):
    """The tower answered with an error: its code and sentence."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.status, self.code, self.detail = status, code, detail

    @property
    def exit_status(self) -> int:
        return NOT_ALLOWED if self.status in (401, 403) else REFUSED


class Unreachable(Exception):
    """No answer from the tower (refused connection, timeout, a proxy's 5xx)."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"tower unreachable at {url} ({why})")
        self.url = url


class NotSignedIn(Exception):
    """Neither `CT_URL`/`CT_TOKEN` nor a saved login."""


def login_path() -> Path:
    """Where `ct login` keeps the URL and token: the user's config folder."""
    return files.config_home() / "login.json"


def save_login(url: str, token: str) -> Path:
    path = login_path()
    files.write_private(path, json.dumps({"url": url, "token": token}) + "\n")
    return path


def saved_login() -> dict:
    try:
        return json.loads(login_path().read_text())
    except (OSError, ValueError):
        return {}


class Tower:
    """The tower's API at `url` (its root, e.g. http://127.0.0.1:8000), as `token`."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url.rstrip("/"), token

    @classmethod
    def configured(cls) -> "Tower":
        """The tower from the environment, else from the saved login."""
        saved = saved_login()
        url = environment.tower_url() or saved.get("url")
        token = environment.tower_token() or saved.get("token")
        if not url or not token:
            raise NotSignedIn("not signed in: set CT_URL and CT_TOKEN, or run `ct login URL` once")
        return cls(url, token)

    def request(
        self,
        method: str,
        path: str,
        body: dict | None = None,
        query: dict | None = None,
        key: str | None = None,
        timeout: float = 10.0,
    ) -> dict:
        """The JSON answer to one request under /api; `Refused` or `Unreachable`.

        `timeout` bounds the whole exchange (connecting, sending, every byte of the
        answer), not each socket read: a tower that dribbles its answer a byte at a time
        is cut off at the deadline like one that is down. Only the tower's own refusal
        (a 4xx whose body is its `{"error", "detail"}`) is `Refused`; anything else (a
        proxy's 404 or 502 page, the tower's 503 while its database is away) is
        `Unreachable`: the request may succeed later."""
        # Imported here, not above: a throttled heartbeat makes no request at all.
        import http.client
        import urllib.parse

        given = {name: value for name, value in (query or {}).items() if value is not None}
        target = urllib.parse.urlsplit(f"{self.url}/api{path}")
        address = target.path + ("?" + urllib.parse.urlencode(given) if given else "")
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers["Idempotency-Key"] = key
        timeout = max(timeout, 0.05)
        secure = target.scheme == "https"
        kind = http.client.HTTPSConnection if secure else http.client.HTTPConnection
        try:
            exchange = kind(target.hostname or "", target.port, timeout=timeout)
        except ValueError as error:  # a port that is not a number
            raise Unreachable(self.url, str(error)) from None
        cutoff = _Cutoff(exchange, timeout)
        try:
            exchange.request(method, address, body=data, headers=headers)
            answer = exchange.getresponse()
            status, raw = answer.status, answer.read()
        except (OSError, ValueError, http.client.HTTPException) as error:
            why = f"no whole answer within {timeout:g} s" if cutoff.fired else str(error)
            raise Unreachable(self.url, why or type(error).__name__) from None
        finally:
            cutoff.cancel()
            exchange.close()
        if cutoff.fired:  # the answer was cut short, whatever it looked like
            raise Unreachable(self.url, f"no whole answer within {timeout:g} s")
        return _answer(self.url, status, raw)


class _Cutoff:
    """Shuts the exchange's socket down at the deadline, from a timer thread: a read
    blocked on a dribbling tower returns at once, and no later read can start."""

    def __init__(self, exchange: "http.client.HTTPConnection", seconds: float) -> None:
        import threading

        self.exchange, self.fired = exchange, False
        self.timer = threading.Timer(seconds, self._cut)
        self.timer.daemon = True
        self.timer.start()

    def _cut(self) -> None:
        import socket

        self.fired = True
        sock = self.exchange.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: nothing left to cut
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self.timer.cancel()


def _answer(url: str, status: int, raw: bytes) -> dict:
    """What the tower said: its JSON on a success, its refusal on a 4xx of its own;
    anything else is not the tower speaking."""
    try:
        found = json.loads(raw or b"{}")
    except ValueError:
        found = None
    if 200 <= status < 300:
        if not isinstance(found, dict):
            raise Unreachable(url, f"HTTP {status} with an answer that is not the tower's JSON")
        return found
    refusal = _refusal(status, found)
    if refusal is None or status >= 500:
        why = f"HTTP {status}" + (f": {refusal.detail}" if refusal else ", not the tower's answer")
        raise Unreachable(url, why)
    raise refusal


def _refusal(status: int, found: object) -> "Refused | None":
    """The tower's own error answer (`{"error": code, "detail": sentence}`), or None."""
    if not isinstance(found, dict):
        return None
    code, detail = found.get("error"), found.get("detail")
    if not isinstance(code, str) or not isinstance(detail, str):
        return None
    return Refused(status, code, detail)
