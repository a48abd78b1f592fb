"""A stand-in for Gemini's API on loopback (`POST /v1beta/models/<model>:
streamGenerateContent?alt=sse`, server-sent events), so that the real Gemini CLI runs
headless (`gemini -p`) in a test with no network. Its first answer calls one of Gemini
CLI's tools (`call`: its name and arguments); every later one says `reply`. Or it follows
a `script`: each answer in turn a call (name, arguments) or a text, the last repeated. Each
answer reports the same usage, so a test knows what Gemini CLI's own record must add up
to."""

import json

from tests.support.sse_standin import SseStandIn

MODEL_VERSION = "gemini-2.5-flash"
USAGE = {
    "promptTokenCount": 100,
    "cachedContentTokenCount": 40,
    "candidatesTokenCount": 20,
    "thoughtsTokenCount": 5,
    "totalTokenCount": 125,
}


class GeminiStandIn(SseStandIn):
    def __init__(
        self,
        call: tuple[str, dict] | None = None,
        reply: str = "STUB-REPLY-OK",
        held: bool = False,
        script: list[tuple[str, dict] | str] | None = None,
    ):
        self.script = script or [call, reply]
        super().__init__(held)

    def answer(self, number: int) -> str:
        step = self.script[min(number, len(self.script)) - 1]
        if isinstance(step, tuple):
            name, args = step
            part = {"functionCall": {"name": name, "args": args}}
        else:
            part = {"text": step}
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": USAGE,
            "modelVersion": MODEL_VERSION,
        }
        return f"data: {json.dumps(chunk)}\n\n"
