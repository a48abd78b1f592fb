"""How many statements one API write sends to the database, on each database: a change
that adds a round trip to the hot path fails here (bench/RESULTS.md has the costs)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions import store
from sessions.domain.vocabulary import PLAN_CREATE
from sessions.readmodels import plan_graphs, plan_sessions
from sessions.rules.append import append_event

pytestmark = pytest.mark.django_db(transaction=True)  # real transactions, no savepoints

# What each statement of the write is for, in order. Around it: the token lookup before
# and, after, the time spent in each status for the answer's view (asked only when this
# process has no sums kept for the session: the view's events are those the append
# read, with its own). A write holding its streams runs in a transaction whose first
# statement, on PostgreSQL, takes the stream locks (SQLite's writers queue on a file
# lock instead); on PostgreSQL an append to one stream holds nothing, and its insert is
# a transaction of its own (`store.appending`). The insert checks the idempotency key.
APPEND = ["view events", "insert"]
# A claim on a plan whose graph (`plan_graphs`) and node sessions (`plan_sessions`) this
# process keeps: what changed of the node sessions (with the keys of the claims made,
# so no claim key is asked for), the plan's last row (it has not grown), the insert (a
# new session: nothing to read of it). The first claim of a process reads the plan's
# stream as well.
# The answer's view then reads the plan's tail once more: its lease, for the lapse.
CLAIM = ["node sessions", "plan tail", "insert", "plan tail (the view's lease)"]


def statements(client, path, body, token):
    # Warm: the connection is open and the token's last use was just recorded.
    client.get("/api/sessions", HTTP_AUTHORIZATION=f"Bearer {token}")
    with CaptureQueriesContext(connection) as captured:
        answer = client.post(
            path, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
        )
    assert answer.status_code == 201, answer.content
    return [query["sql"] for query in captured.captured_queries]


def expected(steps, holding=True):
    if connection.vendor == "sqlite":
        return ["token", "begin", *steps, "commit", "time spans"]
    if not holding:
        return ["token", *steps, "time spans"]
    return ["token", "begin", "locks", *steps, "commit", "time spans"]


def test_an_api_append_sends_one_statement_per_step(client, started, alice, token_for):
    sent = statements(
        client,
        "/api/sessions/s1/events",
        {"type": "session_block", "reason": "x"},
        token_for(alice),
    )
    assert len(sent) == len(expected(APPEND, holding=False)), "\n".join(s[:90] for s in sent)


def test_an_append_to_a_session_read_before_adds_its_span_without_asking(
    client, started, alice, token_for
):
    token = token_for(alice)
    client.get("/api/sessions/s1", HTTP_AUTHORIZATION=f"Bearer {token}")  # sums kept
    body = {"type": "session_block", "reason": "x"}
    sent = statements(client, "/api/sessions/s1/events", body, token)
    assert len(sent) == len(expected(APPEND, holding=False)) - 1, "\n".join(s[:90] for s in sent)
    assert not any("LEAD(" in statement for statement in sent)


@pytest.fixture
def plan(alice):
    nodes = [{"key": "a", "title": "A"}, {"key": "b", "title": "B"}]
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": nodes}, user=alice)


def test_a_claim_sends_one_statement_per_step(client, alice, token_for, plan):
    # As an earlier claim or start on the plan leaves them:
    plan_graphs.graph("p")
    with store.holding("p"):
        plan_sessions.node_states("p", plan_graphs.graph("p"))
    sent = statements(client, "/api/plans/p/claim", {}, token_for(alice))
    assert len(sent) == len(expected(CLAIM)), "\n".join(s[:90] for s in sent)


def test_the_first_claim_of_a_process_reads_the_plan_s_stream_too(client, alice, token_for, plan):
    plan_sessions.KNOWN.forget()  # as in a new process (the graph is new: the plan is)
    sent = statements(client, "/api/plans/p/claim", {}, token_for(alice))
    assert len(sent) == len(expected(CLAIM)) + 1, "\n".join(s[:90] for s in sent)
