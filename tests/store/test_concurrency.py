"""Concurrent appends from threads and processes lose nothing and duplicate nothing."""

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from sessions import store
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import PLAN_AMEND, PLAN_CREATE, START
from sessions.models import Event
from sessions.rules.append import append_event
from sessions.rules.refusals import Conflict
from tests.support.workers import append_blocks, process_main

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
PROCESSES = 4


@pytest.fixture
def start_sessions(lead):
    def start(*session_ids):
        for session_id in session_ids:
            append_event(session_id, START, {"title": session_id}, user=lead)

    return start


def in_threads(jobs, barrier=None):
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(append_blocks, *job, barrier=barrier) for job in jobs]
        return [outcome for future in futures for outcome in future.result()]


def in_processes(database_url, jobs, barrier_parties=None):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    barrier = context.Barrier(barrier_parties) if barrier_parties else None
    processes = [
        context.Process(target=process_main, args=(database_url, queue, job, barrier))
        for job in jobs
    ]
    for process in processes:
        process.start()
    results = [queue.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
    errors = [result for result in results if isinstance(result, str)]
    assert not errors, errors[0]
    return [outcome for result in results for outcome in result]


def assert_stored_exactly_once(outcomes, session_ids):
    stored = {(session, seq, reason) for kind, session, seq, reason in outcomes if kind == "stored"}
    assert len(stored) == sum(1 for outcome in outcomes if outcome[0] == "stored")
    rows = Event.objects.filter(session__in=session_ids, type="session_block")
    assert set(rows.values_list("session", "seq", "reason")) == stored
    for session_id in session_ids:
        seqs = list(Event.objects.filter(session=session_id).values_list("seq", flat=True))
        assert seqs == list(range(1, len(seqs) + 1))


def reasons(worker, count):
    return [f"w{worker}-{n}" for n in range(count)]


def test_threads_appending_to_one_session_lose_and_duplicate_nothing(start_sessions):
    start_sessions("shared")
    outcomes = in_threads([("lead", "shared", reasons(w, 25)) for w in range(THREADS)])
    assert all(kind == "stored" for kind, *_ in outcomes)
    assert_stored_exactly_once(outcomes, ["shared"])
    assert Event.objects.filter(session="shared").count() == 1 + THREADS * 25


def test_threads_appending_to_many_sessions_lose_and_duplicate_nothing(start_sessions):
    sessions = [f"s{n}" for n in range(4)]
    start_sessions(*sessions)
    jobs = [("lead", sessions[w % 4], reasons(w, 20)) for w in range(THREADS)]
    outcomes = in_threads(jobs)
    assert all(kind == "stored" for kind, *_ in outcomes)
    assert_stored_exactly_once(outcomes, sessions)


def test_processes_appending_to_one_session_lose_and_duplicate_nothing(
    start_sessions, database_url
):
    start_sessions("shared")
    outcomes = in_processes(database_url, [("lead", "shared", reasons(w, 30)) for w in range(4)])
    assert all(kind == "stored" for kind, *_ in outcomes)
    assert_stored_exactly_once(outcomes, ["shared"])
    assert Event.objects.filter(session="shared").count() == 1 + PROCESSES * 30


def test_processes_appending_to_many_sessions_lose_and_duplicate_nothing(
    start_sessions, database_url
):
    sessions = ["p0", "p1"]
    start_sessions(*sessions)
    jobs = [("lead", sessions[w % 2], reasons(w, 30)) for w in range(PROCESSES)]
    outcomes = in_processes(database_url, jobs)
    assert all(kind == "stored" for kind, *_ in outcomes)
    assert_stored_exactly_once(outcomes, sessions)


def test_threads_racing_on_one_expected_seq_give_exactly_one_winner(start_sessions):
    start_sessions("race")
    barrier = threading.Barrier(THREADS)
    jobs = [("lead", "race", [f"w{w}"], 1) for w in range(THREADS)]
    outcomes = in_threads(jobs, barrier=barrier)
    assert sorted(kind for kind, *_ in outcomes) == ["conflict"] * (THREADS - 1) + ["stored"]
    assert_stored_exactly_once(outcomes, ["race"])


def test_processes_racing_on_one_expected_seq_give_exactly_one_winner(start_sessions, database_url):
    start_sessions("race")
    jobs = [("lead", "race", [f"w{w}"], 1) for w in range(PROCESSES)]
    outcomes = in_processes(database_url, jobs, barrier_parties=PROCESSES)
    assert sorted(kind for kind, *_ in outcomes) == ["conflict"] * (PROCESSES - 1) + ["stored"]
    assert_stored_exactly_once(outcomes, ["race"])


def test_an_amend_retiring_a_node_waits_for_a_start_that_holds_the_plan(alice):
    nodes = [{"key": "a", "title": "A"}, {"key": "b", "title": "B"}]
    append_event("p", PLAN_CREATE, {"title": "P", "nodes": nodes}, user=alice)
    holding, release, refused = threading.Event(), threading.Event(), []

    def start_on_node():  # as a start on a node does: it holds the plan
        try:
            with store.holding("p", "s1"):
                holding.set()
                release.wait(10)
                store.insert(
                    EventRecord("s1", 1, START, timezone.now(), "alice", "A", plan="p", node="a")
                )
        finally:
            connection.close()

    def retire():
        try:
            append_event("p", PLAN_AMEND, {"retire": ["a"]}, user=alice)
        except Conflict as conflict:
            refused.append(conflict.code)
        finally:
            connection.close()

    starter = threading.Thread(target=start_on_node)
    starter.start()
    assert holding.wait(10)
    amender = threading.Thread(target=retire)
    amender.start()
    amender.join(0.5)  # it must be waiting for the plan, not reading it already
    release.set()
    starter.join(10)
    amender.join(10)
    assert refused == ["node_running"]
