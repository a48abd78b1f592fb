"""A stand-in for OpenAI's Responses API on loopback (`POST /v1/responses`, streamed as
server-sent events), so that the real Codex CLI runs headless (`codex exec`) in a test
with no network. Its first answer calls Codex's shell tool (`exec_command`) with `cmd`;
every later one says `reply`. It keeps every request body it was sent; each answer
reports the same usage, so a test knows what Codex's own record must add up to. Its
first answer waits until the test lets it go (`gate`, open unless `held`), so that a
test can act mid-session."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 40},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 120,
}


def _event(data: dict) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


class ResponsesStandIn:
    def __init__(self, cmd: str, reply: str = "STUB-REPLY-OK", held: bool = False) -> None:
        self.cmd, self.reply = cmd, reply
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
                with stand_in._lock:
                    stand_in.requests.append(body)
                    number = len(stand_in.requests)
                if number == 1:
                    stand_in.gate.wait(60)
                data = stand_in.answer(number).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, number: int) -> str:
        if number == 1:
            arguments = json.dumps({"cmd": self.cmd})
            item = {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "exec_command",
                "arguments": arguments,
            }
        else:
            content = [{"type": "output_text", "text": self.reply}]
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{number}",
                "content": content,
            }
        response = {"id": f"resp_{number}"}
        return (
            _event({"type": "response.created", "response": response})
            + _event({"type": "response.output_item.done", "output_index": 0, "item": item})
            + _event({"type": "response.completed", "response": {**response, "usage": USAGE}})
        )

    def __enter__(self) -> "ResponsesStandIn":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
