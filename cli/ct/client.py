"""Talking to the tower: where it is and who we are (`CT_URL`, `CT_TOKEN`, or what
`ct login` saved), and one JSON request at a time over HTTP, every failure turned into
one of two errors a person can read."""

import json
import os
from pathlib import Path

from ct import files

# Exit statuses (DESIGN.md, "The agent's side").
DONE, REFUSED, USAGE, NOT_ALLOWED, UNREACHABLE, TIMED_OUT = 0, 1, 2, 3, 4, 5

# The tower's answers that mean "try again later": its database is away (503), or a proxy
# in front of it could not reach it.
_UNAVAILABLE = {502, 503, 504}


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
        url = os.environ.get("CT_URL") or saved.get("url")
        token = os.environ.get("CT_TOKEN") or saved.get("token")
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
        """The JSON answer to one request under /api; `Refused` or `Unreachable`."""
        # Imported here, not above: they are a third of a hook's start, and a throttled
        # heartbeat makes no request at all.
        import urllib.error
        import urllib.parse
        import urllib.request

        url = f"{self.url}/api{path}"
        given = {name: value for name, value in (query or {}).items() if value is not None}
        if given:
            url += "?" + urllib.parse.urlencode(given)
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers["Idempotency-Key"] = key
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=max(timeout, 0.05)) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            if error.code in _UNAVAILABLE:
                raise Unreachable(self.url, f"HTTP {error.code}") from None
            raise _refusal(error) from None
        except (TimeoutError, urllib.error.URLError, OSError) as error:
            why = getattr(error, "reason", None) or error
            raise Unreachable(self.url, str(why)) from None
        except ValueError:
            raise Unreachable(self.url, "the answer was not JSON") from None


def _refusal(error) -> Refused:
    """The tower's error answer (a `urllib.error.HTTPError`) as a `Refused`."""
    try:
        found = json.loads(error.read())
        return Refused(error.code, str(found["error"]), str(found["detail"]))
    except (OSError, ValueError, KeyError, TypeError):
        return Refused(error.code, f"http_{error.code}", error.reason or "refused")
