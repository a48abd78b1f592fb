"""A stand-in for Gemini's API on loopback (`POST /v1beta/models/<model>:
streamGenerateContent?alt=sse`, server-sent events), so that the real Gemini CLI runs
headless (`gemini -p`) in a test with no network. Its first answer calls one of Gemini
CLI's tools (`call`: its name and arguments); every later one says `reply`. Each
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
    def __init__(self, call: tuple[str, dict], reply: str = "STUB-REPLY-OK", held: bool = False):
        self.call, self.reply = call, reply
        super().__init__(held)

    def answer(self, number: int) -> str:
        if number == 1:
            name, args = self.call
            part = {"functionCall": {"name": name, "args": args}}
        else:
            part = {"text": self.reply}
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": USAGE,
            "modelVersion": MODEL_VERSION,
        }
        return f"data: {json.dumps(chunk)}\n\n"
