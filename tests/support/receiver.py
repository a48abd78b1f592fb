"""Real HTTP endpoints on loopback for the webhook tests and benchmark: a receiver that
records every POST (and answers as it is told), and a black hole that never answers."""

import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when it arrived
    wall: float  # time.time() then, to set beside an event's timestamp

    @property
    def json(self) -> object:
        return json.loads(self.body)

    @property
    def delivery(self) -> str:
        return self.headers["X-Tower-Delivery"]

    def signed_by(self, secret: str, window_seconds: int = 300) -> bool:
        """Does the signature verify, and is its moment within `window_seconds` of the
        receiver's clock, as README's receiver checks it?"""
        timestamp = self.headers.get("X-Tower-Timestamp", "")
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > window_seconds:
            return False
        signed = timestamp.encode() + b"." + self.body
        expected = "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, self.headers.get("X-Tower-Signature-256", ""))


class Receiver:
    """Records every POST. `answer(n)` gives the status of the n-th request (from 1), and
    may take its time; by default every request gets 204."""

    def __init__(self, answer: Callable[[int], int] | None = None) -> None:
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.arrived:
                    receiver.received.append(
                        Received(dict(self.headers), body, time.monotonic(), time.time())
                    )
                    number = len(receiver.received)
                    receiver.arrived.notify_all()
                status = answer(number) if answer else 204
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender is gone (a killed worker): nothing to answer

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_until(self, done: Callable[[list[Received]], bool], timeout: float = 30) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: done(self.received), timeout=timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class BlackHole:
    """A port that takes connections (the kernel completes them) and never answers."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}/hook"

    def close(self) -> None:
        self.socket.close()
