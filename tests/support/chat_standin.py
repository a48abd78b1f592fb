"""A stand-in for OpenAI's chat completions on loopback (`POST /v1/chat/completions`,
streamed as server-sent events), so that the real OpenCode runs headless (`opencode run`)
in a test with no network. Its first answer to the agent's loop (a request offering
tools) calls one of OpenCode's tools (`call`: its name and arguments); every later one
says `reply`. A request offering no tools (a title) gets a short text. Each loop answer
reports the same usage, so a test knows what OpenCode's own record must add up to."""

import json

from tests.support.sse_standin import SseStandIn

USAGE = {
    "prompt_tokens": 100,
    "completion_tokens": 20,
    "total_tokens": 120,
    "prompt_tokens_details": {"cached_tokens": 40},
}


def _chunks(delta: dict, finish: str, usage: dict | None) -> str:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "stub-model"}
    first = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    said = [first, last] + ([{**base, "choices": [], "usage": usage}] if usage else [])
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in said) + "data: [DONE]\n\n"


class ChatStandIn(SseStandIn):
    path = "/v1"

    def __init__(self, call: tuple[str, dict], reply: str = "STUB-REPLY-OK", held: bool = False):
        self.call, self.reply = call, reply
        super().__init__(held)

    def in_loop(self, body: dict) -> bool:
        return bool(body.get("tools"))

    def aside(self, body: dict) -> str:
        return _chunks({"role": "assistant", "content": "a title"}, "stop", None)

    def answer(self, number: int) -> str:
        if number == 1:
            name, args = self.call
            function = {"name": name, "arguments": json.dumps(args)}
            tool_call = {"index": 0, "id": "call_1", "type": "function", "function": function}
            return _chunks({"role": "assistant", "tool_calls": [tool_call]}, "tool_calls", USAGE)
        return _chunks({"role": "assistant", "content": self.reply}, "stop", USAGE)
