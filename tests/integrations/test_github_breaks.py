"""What the red team broke in the forge integration (issue 52), each as it must hold now:
a merge reaches only its own work; a delivery is read once, so a run again after a lost
connection still knows its signature; a status naming 70,000 branches is one
parameter; a deeply nested body is 400; a chunked body past 5 MiB is 413."""

import http.client
import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import OperationalError, connection

from sessions.domain.vocabulary import CLOSE, START, WORK
from sessions.models import Event
from sessions.rules import forge
from sessions.rules.append import append_event
from tests.conftest import Gunicorn
from tests.integrations.test_github import (
    BRANCH,
    HEAD,
    REPO,
    events,
    pull_request,
)
from tests.support.forge import SECRET, deliver, example, sign

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def secret(settings):
    settings.GITHUB_WEBHOOK_SECRET = SECRET
    return SECRET


def working(user, session, branch=BRANCH, **fields):
    append_event(session, START, {"title": "T"}, user=user)
    work = {"repo": REPO, "branch": branch, "commit": HEAD, **fields}
    append_event(session, WORK, work, user=user)
    return session


def moment(delta):
    return (datetime.now(UTC) + delta).isoformat().replace("+00:00", "Z")


# A merge closes only its own work ------------------------------------------------------


def test_an_edit_of_an_old_merged_pull_request_closes_nothing(live_server, secret, alice):
    working(alice, "new-work")
    # GitHub publishes no `edited` example: the `opened` one, as an edit of a merged PR.
    edited = pull_request("opened", merged=True, merged_at=moment(-timedelta(days=30)))
    edited["action"] = "edited"
    answer = deliver(live_server.url, "pull_request", edited)
    assert answer.json()["appended"] == ["new-work"]
    assert CLOSE not in events("new-work")
    reported = Event.objects.filter(session="new-work", type=WORK).last()
    assert (reported.pr, reported.pr_state) == (94, None)  # its number, never "merged"


def test_a_merge_from_a_shared_branch_closes_nobodys_work(live_server, secret, alice):
    working(alice, "on-main", branch="main")
    merged = pull_request("merged", branch="main")
    answer = deliver(live_server.url, "pull_request", merged)
    assert answer.json() == {"matched": 0, "appended": []}
    assert CLOSE not in events("on-main")


def test_a_merge_does_not_close_a_session_opened_after_it(live_server, secret, alice):
    working(alice, "later")
    merged = pull_request("merged", merged_at=moment(-timedelta(hours=1)))
    assert deliver(live_server.url, "pull_request", merged).json()["matched"] == 0
    assert CLOSE not in events("later")


def test_a_merge_closes_a_session_opened_after_it_that_named_the_pr(live_server, secret, alice):
    working(alice, "named-it", pr=94)
    merged = pull_request("merged", merged_at=moment(-timedelta(hours=1)))
    assert deliver(live_server.url, "pull_request", merged).json()["appended"] == ["named-it"]
    assert events("named-it")[-1] == CLOSE


def test_a_merge_with_no_moment_closes_only_a_session_that_named_the_pr(live_server, secret, alice):
    working(alice, "named-it", pr=94)
    working(alice, "did-not", branch=BRANCH)
    merged = pull_request("merged")
    merged["pull_request"]["merged_at"] = None
    assert deliver(live_server.url, "pull_request", merged).json()["appended"] == ["named-it"]


# Bodies -----------------------------------------------------------------------------


def test_a_deeply_nested_delivery_is_400(live_server, secret):
    body = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = deliver(live_server.url, "pull_request", body)
    assert answer.status == 400
    assert "nested too deeply" in answer.json()["detail"]


def test_a_status_naming_70000_branches_lands_on_the_one_worked_on(live_server, secret, alice):
    working(alice, "on-branch")
    payload = example("status")
    payload["repository"]["full_name"] = REPO
    payload["sha"] = "7" * 40
    payload["branches"] = [{"name": f"b{n}"} for n in range(70_000)] + [{"name": BRANCH}]
    answer = deliver(live_server.url, "status", payload)
    assert (answer.status, answer.json()["appended"]) == (200, ["on-branch"])


def test_a_delivery_run_again_after_a_lost_connection_still_knows_its_body(
    live_server, secret, alice, monkeypatch
):
    working(alice, "on-branch")
    report, lost = forge.report, []

    def loses_the_connection_once(*args):
        if not lost:
            lost.append(True)
            fault = OperationalError("terminating connection due to administrator command")
            fault.__cause__ = psycopg.errors.AdminShutdown()
            raise fault
        return report(*args)

    monkeypatch.setattr(forge, "report", loses_the_connection_once)
    answer = deliver(live_server.url, "pull_request", pull_request("merged"))
    assert lost and (answer.status, answer.json()["appended"]) == (200, ["on-branch"])
    assert events("on-branch")[-1] == CLOSE


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's backends")
def test_a_merge_after_the_towers_connections_were_terminated_still_lands(database_url, alice):
    server = Gunicorn(f"{database_url}?application_name=ct-forge", workers=1, threads=1)
    server.env["GITHUB_WEBHOOK_SECRET"] = SECRET
    server.start()
    try:
        working(alice, "on-branch")
        assert deliver(server.url, "pull_request", pull_request("opened")).status == 200
        dsn = database_url.replace(f"/{connection.settings_dict['NAME']}", "/postgres")
        with psycopg.connect(dsn, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'ct-forge'"
            ).fetchall()
        assert dropped, "the tower held no connection to drop"
        answer = deliver(server.url, "pull_request", pull_request("merged"))
    finally:
        server.stop()
    assert (answer.status, answer.json()["appended"]) == (200, ["on-branch"])
    assert events("on-branch")[-1] == CLOSE


def chunked_post(url, body: bytes, signature: str):
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": "d-chunked",
        "X-Hub-Signature-256": signature,
    }
    pieces = (body[at : at + 65536] for at in range(0, len(body), 65536))
    conn.request("POST", "/integrations/github", pieces, headers, encode_chunked=True)
    answer = conn.getresponse()
    return answer.status, answer.read()


def test_a_chunked_delivery_is_read_whole_and_past_5_mib_is_413(database_url):
    server = Gunicorn(database_url, workers=1, threads=1)
    server.env["GITHUB_WEBHOOK_SECRET"] = SECRET
    server.start()
    try:
        ping = json.dumps(example("ping")).encode()
        small = chunked_post(server.url, ping, sign(SECRET, ping))
        large = chunked_post(server.url, b" " * (6 * 1024 * 1024), "sha256=wrong")
    finally:
        server.stop()
    assert small[0] == 200 and json.loads(small[1]) == {"pong": True}
    assert large[0] == 413
