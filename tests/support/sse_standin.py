"""A model API's stand-in on loopback that answers every POST with server-sent events,
so that a real agent runs headless in a test with no network. A subclass says what each
answer of the agent's main loop is (`answer`: by its number, from 1), and may tell the
loop's requests from others (`in_loop`; a title, say), which get `aside`. It keeps every
request body of the loop. Its
first answer waits until the test lets it go (`gate`, open unless `held`), so that a test
can act mid-session."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SseStandIn:
    path = ""  # what `url` ends with: where the agent is told its API is

    def __init__(self, held: bool = False) -> None:
        self.gate = threading.Event()
        if not held:
            self.gate.set()
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if not stand_in.in_loop(body):
                    self.send(stand_in.aside(body))
                    return
                with stand_in._lock:
                    stand_in.requests.append(body)
                    number = len(stand_in.requests)
                if number == 1:
                    stand_in.gate.wait(60)
                self.send(stand_in.answer(number))

            def send(self, answer: str) -> None:
                data = answer.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"

    def answer(self, number: int) -> str:
        raise NotImplementedError

    def in_loop(self, body: dict) -> bool:
        return True

    def aside(self, body: dict) -> str:
        raise NotImplementedError

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
