"""An agent with nothing but HTTP and a token runs a session from start to close against
a real gunicorn on loopback."""

from tests.support.http import http_request


def test_an_agent_runs_a_whole_session_over_http(gunicorn, make_user, token_for):
    token = token_for(make_user("agent-7"))

    def call(method, path, body=None):
        return http_request(gunicorn.url, method, path, body, token=token)

    started = call("POST", "/api/sessions", {"id": "smoke", "title": "Smoke", "note": "begin"})
    assert started.status == 201
    steps = [
        {"type": "session_block", "reason": "need a key"},
        {"type": "session_unblock"},
        {"type": "session_review", "note": "PR 1"},
        {"type": "session_close", "note": "merged"},
    ]
    for seq, body in enumerate(steps, start=1):
        response = call("POST", "/api/sessions/smoke/events", {**body, "expected_seq": seq})
        assert response.status == 201, response.body
    view = call("GET", "/api/sessions/smoke").json()
    assert (view["status"], view["next_action"], view["seq"]) == ("closed", "merged", 5)
    log = call("GET", "/api/sessions/smoke/events.jsonl").body.decode().splitlines()
    assert [line.split('"type":"')[1].split('"')[0] for line in log] == [
        "session_start",
        "session_block",
        "session_unblock",
        "session_review",
        "session_close",
    ]
