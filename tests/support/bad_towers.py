"""Towers that misbehave, as real socket servers on loopback: one that dribbles its
answer a byte at a time, one that is a proxy's 404 page, one that accepts and says
nothing; and a relay that brings a tower back at a port where nothing answered."""

import contextlib
import socket
import threading
import time

DRIBBLE_EVERY_SECONDS = 0.4
# How long a bad tower keeps at one connection before it lets go (bounded, always).
LONGEST_SECONDS = 30.0


def _proxy_404() -> bytes:
    body = b"<html><body>default backend - 404</body></html>"
    head = (
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def _dribble(connection: socket.socket, stop: threading.Event) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\n")
    began = time.monotonic()
    while not stop.is_set() and time.monotonic() - began < LONGEST_SECONDS:
        connection.sendall(b"X")
        stop.wait(DRIBBLE_EVERY_SECONDS)


def _silent(connection: socket.socket, stop: threading.Event) -> None:
    stop.wait(LONGEST_SECONDS)


def _not_the_tower(connection: socket.socket, stop: threading.Event) -> None:
    connection.sendall(_proxy_404())


BEHAVIOURS = {"dribbling": _dribble, "silent": _silent, "proxy_404": _not_the_tower}


class _LoopbackServer:
    """A server on a loopback port (0: any free one) that hands each connection to
    `_handle` in a thread of its own; a context manager that stops it on exit."""

    def __init__(self, port: int = 0) -> None:
        self.listener = socket.create_server(("127.0.0.1", port))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        self.connections = 0

    def __enter__(self):
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *_) -> None:
        self.stop.set()
        self.listener.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(connection,), daemon=True).start()

    def _handle(self, connection: socket.socket) -> None:
        raise NotImplementedError


class BadTower(_LoopbackServer):
    """A server on a loopback port answering every request as `behaviour` says; used as
    a context manager (`url` while it runs). `connections` counts what reached it."""

    def __init__(self, behaviour: str) -> None:
        super().__init__()
        self.behave = BEHAVIOURS[behaviour]

    def _handle(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            connection.settimeout(LONGEST_SECONDS)
            connection.recv(65536)  # the request (its first part is enough)
            self.behave(connection, self.stop)


class Relay(_LoopbackServer):
    """Relays connections at loopback `port` to `target` (a live tower's port): the tower
    coming back where nothing answered before."""

    def __init__(self, port: int, target: int) -> None:
        super().__init__(port)
        self.target = target

    def _handle(self, incoming: socket.socket) -> None:
        outgoing = socket.create_connection(("127.0.0.1", self.target))
        for source, sink in ((incoming, outgoing), (outgoing, incoming)):
            threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
