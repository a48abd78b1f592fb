"""The v2 conformance cases, as the pure functions' tests read them."""

import json

from sessions.domain import jsonl, plans
from sessions.domain.vocabulary import DONE
from tests.conftest import CONFORMANCE

V2 = CONFORMANCE / "v2"


def v2_expected():
    return json.loads((V2 / "expected.json").read_text(encoding="utf-8"))


PLANS = sorted(v2_expected()["plans"])


def decoded(stream_id):
    return jsonl.decode_log(
        f"{stream_id}.jsonl", (V2 / "logs" / f"{stream_id}.jsonl").read_bytes()
    )[1]


def v2_node_sessions(plan_id):
    found = []
    for path in (V2 / "logs").glob("*.jsonl"):
        events = decoded(path.stem)
        first = events[0]
        if first.type == "session_start" and first.plan == plan_id:
            ended = (events[-1].outcome or DONE) if events[-1].type == "session_close" else None
            found.append(plans.NodeSession(path.stem, first.node, first.timestamp, ended))
    return found
