"""A stand-in for Claude's Messages API on loopback, so that the real Claude Code runs
headless (`claude -p`) in a test with no network: it answers every request of the agent's
main loop (those offering tools) from a script, and any other request (a title, a count)
with a short text. It keeps every request it was sent, and can hold its first answer
until the test lets it go (`gate`), so that a test can act mid-session. Each answer has
an id of its own and usage figures of its own (`usage_for`), as the real API's do: a
streamed answer gives its input and cache figures at its start and its output at its
end."""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tool_use(name: str, tool_input: dict) -> dict:
    return {
        "type": "tool_use",
        "id": f"toolu_{abs(hash(json.dumps(tool_input))) % 10**12}",
        "name": name,
        "input": tool_input,
    }


def text(words: str) -> dict:
    return {"type": "text", "text": words}


class ModelStandIn:
    """`script`: the content of each answer of the main loop, in order (the last one
    repeats); or a function of the request giving its answer's content, for agents run
    at once whose requests come in any order. The first main-loop answer waits for
    `gate` to be set."""

    def __init__(self, script: "list[list[dict]] | Callable[[dict], list[dict]]") -> None:
        self.script = script
        self.requests: list[dict] = []  # the main loop's, in order
        self.first_request = threading.Event()
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.answers = 0  # how many it gave: the next one's number
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ModelStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()

    def number_next(self) -> int:
        with self.lock:
            self.answers += 1
            return self.answers

    @staticmethod
    def usage_for(number: int) -> dict:
        """The usage of the `number`th answer: different in every field and answer."""
        return {
            "input_tokens": 100 + number,
            "cache_creation_input_tokens": 40 + number,
            "cache_read_input_tokens": 1000 * number,
            "output_tokens": 10 + number,
        }

    def answer_for(self, body: dict) -> list[dict]:
        if not body.get("tools"):
            return [text("Session")]
        with self.lock:
            self.requests.append(body)
            turn = len(self.requests) - 1
        if turn == 0:
            self.first_request.set()
            self.gate.wait(timeout=60)
        if callable(self.script):
            return self.script(body)
        return self.script[min(turn, len(self.script) - 1)]

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                self._send(200, b"", "text/plain")

            def do_GET(self) -> None:
                self._send(
                    404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}'
                )

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._send(200, b'{"input_tokens": 100}')
                    return
                if not self.path.startswith("/v1/messages"):
                    self._send(
                        404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}'
                    )
                    return
                content = standin.answer_for(body)
                stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
                number = standin.number_next()
                message = {
                    "id": f"msg_standin_{number}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "content": content,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": standin.usage_for(number),
                }
                if body.get("stream"):
                    self._stream(message)
                else:
                    self._send(200, json.dumps(message).encode())

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict) -> None:
                events = [
                    (
                        "message_start",
                        {
                            "type": "message_start",
                            "message": {
                                **message,
                                "content": [],
                                "stop_reason": None,
                                "usage": {**message["usage"], "output_tokens": 1},
                            },
                        },
                    )
                ]
                for index, block in enumerate(message["content"]):
                    if block["type"] == "text":
                        start = {**block, "text": ""}
                        delta = {"type": "text_delta", "text": block["text"]}
                    else:
                        start = {**block, "input": {}}
                        delta = {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block["input"]),
                        }
                    events += [
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": index, "content_block": start},
                        ),
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": index, "delta": delta},
                        ),
                        ("content_block_stop", {"type": "content_block_stop", "index": index}),
                    ]
                events += [
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                data = "".join(
                    f"event: {name}\ndata: {json.dumps(event)}\n\n" for name, event in events
                ).encode()
                self._send(200, data, "text/event-stream")

        return Handler


def request_text(body: dict) -> str:
    """Everything a request says, as one string (to look for what the agent was told)."""
    return json.dumps(body.get("messages", []))
