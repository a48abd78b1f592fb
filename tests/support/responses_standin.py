"""A stand-in for OpenAI's Responses API on loopback (`POST /v1/responses`, streamed as
server-sent events), so that the real Codex CLI runs headless (`codex exec`) in a test
with no network. Its first answer calls Codex's shell tool (`exec_command`) with `cmd`,
or with `patch` its `apply_patch` (offered to models Codex knows, e.g. `gpt-5.5-codex`);
every later one says `reply`. Each answer reports the same usage, so a test knows what
Codex's own record must add up to."""

import json

from tests.support.sse_standin import SseStandIn

USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 40},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 120,
}


def _event(data: dict) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


class ResponsesStandIn(SseStandIn):
    path = "/v1"

    def __init__(
        self, cmd: str, reply: str = "STUB-REPLY-OK", held: bool = False, patch: str | None = None
    ) -> None:
        self.cmd, self.reply, self.patch = cmd, reply, patch
        super().__init__(held)

    def answer(self, number: int) -> str:
        if number == 1 and self.patch is not None:  # Codex's own patch tool, free-form
            item = {
                "type": "custom_tool_call",
                "id": "ctc_1",
                "call_id": "call_1",
                "name": "apply_patch",
                "input": self.patch,
            }
        elif number == 1:
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
