import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection, transaction

from sessions import store
from sessions.domain import projections, vocabulary
from sessions.readmodels import kept
from sessions.rules.append import append_event
from tests.support.ct_tools import end_flushers
from tests.support.http import http_request
from tests.support.plans import RELEASE, post

ROOT = Path(__file__).resolve().parent.parent
# The suite's own copy of the contract's conformance cases, so that a clone tests alone;
# test_conformance_copy.py fails when it drifts from ../shared/conformance/.
CONFORMANCE = Path(__file__).resolve().parent / "conformance"
SHARED_CONFORMANCE = Path(os.environ.get("CONTROLTOWER_SHARED", ROOT.parent / "shared")) / (
    "conformance"
)


def conformance_expected():
    return json.loads((CONFORMANCE / "expected.json").read_text(encoding="utf-8"))


def projected_status(session_id):
    """A stored session's status, by the pure projection of its stream."""
    return projections.status(store.read_stream(session_id))


def conformance_now():
    return datetime.fromisoformat(conformance_expected()["now"]).astimezone(UTC)


def spans(events):
    """`store.stream_spans`, in Python: microseconds from each transition to the next,
    summed by the transition's type (progress and messages leave the status as it was)."""
    found = {}
    transitions = [event for event in events if event.type in vocabulary.STATUS_AFTER]
    for event, following in itertools.pairwise(transitions):
        span = (following.timestamp - event.timestamp) // timedelta(microseconds=1)
        found[event.type] = found.get(event.type, 0) + span
    return found


@pytest.fixture(autouse=True)
def no_flusher_left_behind(tmp_path_factory):
    """A hook that leaves its spool full starts a background flusher, which retries for
    a day: each test ends the ones this run started (their state folders are under its
    temporary folder)."""
    yield
    end_flushers(tmp_path_factory.getbasetemp())


@pytest.fixture(autouse=True)
def fresh_open_sessions():
    """Each test's database starts empty again (a rollback or a flush), which a running
    server never sees; so the process's read models start over too."""
    kept.forget_all()


@pytest.fixture
def make_user(db):
    def make(username, *, act_on_any=False, **extra):
        user = User.objects.create_user(username=username, password="pw-" + username, **extra)
        if act_on_any:
            user.user_permissions.add(
                Permission.objects.get(
                    codename="act_on_any_session", content_type__app_label="tower"
                )
            )
            user = User.objects.get(pk=user.pk)  # fresh permission cache
        return user

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def alice_client(client, alice):
    """Django's test client, signed in as alice."""
    client.force_login(alice)
    return client


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def lead(make_user):
    return make_user("lead", act_on_any=True)


@pytest.fixture
def started(alice):
    """A session `s1` that alice started, with a first next action."""
    append_event("s1", vocabulary.START, {"title": "Ship it", "note": "write tests"}, user=alice)
    return "s1"


@pytest.fixture
def api(live_server):
    """Calls the live server over real HTTP: api("POST", "/api/sessions", {...}, token=...)."""

    def call(method, path, body=None, **kwargs):
        return http_request(live_server.url, method, path, body, **kwargs)

    return call


@pytest.fixture
def token_for():
    from sessions.rules.tokens import create_token

    def make(user, name="test"):
        return create_token(user, name)[1]

    return make


@pytest.fixture
def token(alice, token_for):
    """An API token of alice's."""
    return token_for(alice)


@pytest.fixture
def auth(token):
    """Django test client headers that authenticate as alice's token."""
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def database_url():
    """The URL of the test database, for processes that connect on their own."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def process_env(database_url):
    """The environment of a process of ours (a server, a worker) on the test database."""
    return {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "tests.settings"}


class Gunicorn:
    """A real gunicorn serving the test database on a loopback port."""

    def __init__(self, database_url, workers=2, threads=4, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = process_env(database_url)
        self.args = [
            sys.executable,
            "-m",
            "gunicorn",
            "controltower.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--graceful-timeout",
            "5",
            "--log-level",
            "warning",
        ]
        self.process = None
        self.killed_workers = 0

    def start(self):
        # A session of its own, so that `kill` can take the master and workers at once.
        self.process = subprocess.Popen(self.args, cwd=ROOT, env=self.env, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if http_request(self.url, "GET", "/api/openapi.json").status == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("gunicorn did not start within 30 s")

    def worker_pids(self):
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def kill_worker(self):
        """SIGKILL one worker; the master starts another."""
        os.kill(self.worker_pids()[0], signal.SIGKILL)
        self.killed_workers += 1

    def kill(self):
        """SIGKILL the master and every worker, as a crash or power cut would."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def gunicorn(database_url, transactional_db):
    server = Gunicorn(database_url)
    yield server.start()
    server.stop()


@contextmanager
def committing_late(write):
    """Runs `write()` in another thread's transaction, which stays open until the block
    ends: rows it inserted (lower ids) commit after those the block inserts."""
    inserted, release = threading.Event(), threading.Event()

    def write_slowly():
        try:
            with transaction.atomic():
                write()
                inserted.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(write_slowly)
        assert inserted.wait(timeout=30)
        try:
            yield
        finally:
            release.set()
            slow.result(timeout=30)


# Fast enough for tests: a retry after 50 ms, doubling to at most 200 ms.
FAST = ["--poll-seconds", "0.1", "--first-retry-seconds", "0.05", "--max-retry-seconds", "0.2"]


class Deliverer:
    """`manage.py deliver` in a process of its own, against the test database."""

    def __init__(self, database_url: str, *options: str) -> None:
        self.args = [sys.executable, "manage.py", "deliver", *FAST, *options]
        self.env = process_env(database_url)
        self.process: subprocess.Popen | None = None

    def start(self) -> "Deliverer":
        self.process = subprocess.Popen(
            self.args, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL
        )
        return self

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


@pytest.fixture
def deliverer(database_url):
    started = []

    def start(*options: str) -> Deliverer:
        started.append(Deliverer(database_url, *options).start())
        return started[-1]

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def plan(client, auth):
    """The release plan (`support.plans.RELEASE`), made over the API."""
    answer = post(client, "/api/plans", {"id": "rel", "title": "Release", "nodes": RELEASE}, **auth)
    assert answer.status_code == 201, answer.content
    return answer.json()
