"""The rules of writing: `append_event` for every surface, the one way an event is
written (claims, `claims`, and imports, `imports`, are the others).

An append checks the event against the vocabulary and the transition table, then writes
through the store (`store.holding`), which holds the stream against other writers; the
unique (session, seq) constraint remains the last line of defence, and a violation there
means another writer won a race, so we retry against the new tail. Refusals are domain
errors (`refusals`); who may write what is `permissions`'.
"""

import secrets
from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import TypeVar

from django.utils import timezone

from sessions import config, store
from sessions.domain import jsonl, plans, projections, reclaims, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels import budgets as budget_model
from sessions.readmodels import kept, plan_graphs, plan_sessions
from sessions.readmodels import view_events as view_events_model
from sessions.readmodels import work as work_model
from sessions.rules import work as work_rules
from sessions.rules.appends import Append, Appended, HowMade
from sessions.rules.permissions import User, check_permission
from sessions.rules.refusals import (
    Conflict,
    Forbidden,
    InvalidEvent,
    Refused,
    UnknownPlan,
    UnknownSession,
)

_ATTEMPTS = 20
T = TypeVar("T")
NOTHING_KNOWN = HowMade()  # an append whose caller has read nothing of its stream


def new_session_id() -> str:
    return secrets.token_hex(6)


def key_errors(idempotency_key: str | None) -> dict[str, str]:
    """What is wrong with an idempotency key (none when absent)."""
    if idempotency_key is None:
        return {}
    problem = vocabulary.text_error(idempotency_key, vocabulary.IDEMPOTENCY_KEY_MAX)
    return {"idempotency_key": problem} if problem else {}


def _checked(
    stream_id: str | None,
    event_type: str,
    fields: dict,
    user: User,
    expected_seq: int | None,
    idempotency_key: str | None,
) -> dict:
    """The input's fields as stored, and the streams an append of them holds; or the
    refusal of the input, then of a caller not signed in. `stream_id` None: an id is yet
    to be made (`start_unnamed`)."""
    errors = {}
    problem = None if stream_id is None else vocabulary.session_id_error(stream_id)
    if problem:
        errors["session"] = problem
    errors.update(vocabulary.field_errors(event_type, fields))
    if expected_seq is not None and (
        isinstance(expected_seq, bool) or not isinstance(expected_seq, int) or expected_seq < 0
    ):
        errors["expected_seq"] = "must be a whole number of at least 0"
    errors.update(key_errors(idempotency_key))
    if errors:
        raise InvalidEvent(errors)
    if not user.is_authenticated:
        raise Forbidden("Sign in to append events.")
    fields = vocabulary.canonical_fields(fields)
    if event_type == vocabulary.PLAN_CREATE:
        # The stream says what was in force: a new plan that names no lease or cap gets
        # the settings' (import adds nothing, so older files keep having none).
        settings = config.current()
        fields.setdefault("lease", settings.lease_minutes)
        fields.setdefault("max_attempts", settings.max_attempts)
        # Evidence is the default where a repository holds it (docs/rules.md, "Where the
        # work lands"): a plan on a repo is done on merge unless it says otherwise.
        fields.setdefault("done_when", "merge" if fields.get("repo") else "close")
    return fields


def _held_streams(stream_id: str, fields: dict) -> tuple[str, ...]:
    """The streams an append holds: a start on a node holds its plan too, so that racing
    starts of one node (and an amend retiring it) take turns: exactly one wins."""
    return (fields["plan"], stream_id) if "plan" in fields else (stream_id,)


def append_event(
    stream_id: str,
    event_type: str,
    fields: dict,
    *,
    user: User,
    expected_seq: int | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> Appended:
    """Append one event to a session's or a plan's stream, or raise a `Refused` and
    write nothing.

    `fields` holds the type's own fields (None for an absent optional one); `expected_seq`
    is the last seq the caller saw; a repeated `idempotency_key` of the same actor on the
    same stream returns the event it first appended.

    The checks run in this order: the input; permission; the idempotency key (so that a
    retry of a request that succeeded gets its original answer); `expected_seq`; the
    transition; for a plan event, the graph; for a start on a plan's node, the node.
    """
    fields = _checked(stream_id, event_type, fields, user, expected_seq, idempotency_key)
    streams = _held_streams(stream_id, fields)
    append = Append(stream_id, event_type, fields, user, expected_seq, idempotency_key, now)
    # A plan event's checks read its nodes' sessions, so it always holds the plan: a
    # start on a node (which holds the plan too) cannot slip in between.
    # A merge's report appends its close too: both in one transaction, holding the stream.
    held = event_type in vocabulary.PLAN_EVENT_TYPES or work_rules.reports_a_merge(
        event_type, fields
    )
    result = retrying_races(lambda attempt: _append_once(streams, held or attempt > 0, append))
    if result.previous is not None:
        # Committed: the process's read models take it in without asking again.
        kept.appended(result.previous, result.event)
        if result.merge_close is not None:
            kept.appended(result.event, result.merge_close)
    if result.view_events is not None:
        view_events_model.committed(stream_id, result.view_events)
    return result


def start_unnamed(
    event_type: str,
    fields: dict,
    *,
    user: User,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> Appended:
    """Start a session or a plan whose id the caller did not give: an id is made for it.

    A repeated `idempotency_key` of the same actor finds the start it first made among
    the actor's starts, whatever id was made for it, and returns it instead of making
    another (a retry after a timeout must not make a second session). Racing retries of
    one key take turns on a lock named after it, so exactly one starts."""
    if event_type not in (vocabulary.START, vocabulary.PLAN_CREATE):
        raise InvalidEvent({"type": "only a start may name no id"})
    if idempotency_key is None:
        return append_event(new_session_id(), event_type, fields, user=user, now=now)
    fields = _checked(None, event_type, fields, user, None, idempotency_key)
    actor = user.get_username()
    # A retry of a start that succeeded is answered before any lock is taken: on
    # SQLite a lock is the database's single writer's turn, which a read need not wait for.
    earlier = store.start_by_key(actor, idempotency_key, event_type)
    if earlier is not None:
        return Appended(earlier, created=False)
    key_lock = f".key {actor} {idempotency_key}"  # never a stream's id (none begins with .)

    def start() -> Appended:
        stream_id = new_session_id()
        with store.holding(key_lock, *_held_streams(stream_id, fields)):
            earlier = store.start_by_key(actor, idempotency_key, event_type)
            if earlier is not None:
                return Appended(earlier, created=False)
            append = Append(stream_id, event_type, fields, user, None, idempotency_key, now)
            return append_to_stream(append, HowMade(fresh=True))

    return retrying_races(lambda _: start())


def retrying_races(write: Callable[[int], T]) -> T:
    """`write(attempt)`, numbered from 0, until it does not lose a race."""
    for attempt in range(_ATTEMPTS - 1):
        try:
            return write(attempt)
        except store.RaceLost:
            continue  # another writer took this seq first: read the new tail, try again
    return write(_ATTEMPTS - 1)


def _append_once(streams: tuple[str, ...], locked: bool, append: Append) -> Appended:
    # A first try may run without the streams' lock (`store.appending`); after a lost
    # race the append holds it, so no writer loses twice to a busy stream.
    with store.appending(*streams, locked=locked):
        return append_to_stream(append)


def append_to_stream(append: Append, made: HowMade = NOTHING_KNOWN) -> Appended:
    """The append inside `store.appending`, knowing what `made` says its caller knows.

    The idempotency key is checked by the insert, and before a refusal: either way an
    append made earlier under the key is answered with, whatever happened since."""
    stream_id, event_type, fields, user = (
        append.stream_id,
        append.event_type,
        append.fields,
        append.user,
    )
    idempotency_key, plan = append.idempotency_key, made.plan
    if made.fresh:
        chosen = projections.ViewEvents([], 0, 0)
    else:
        chosen = made.view_events or view_events_model.view_events(stream_id)
    ends = chosen.events[:1] + chosen.events[1:][-1:]
    actor = user.get_username()
    now = append.now or timezone.now()
    if ends and not made.reclaiming:
        check_permission(user, event_type, fields, ends[0], chosen.events, now)
    try:
        record = _next_event(append, actor, now, chosen.events)
    except Refused:
        # A refused request may still be a retry of one that succeeded: answer with the
        # event its key first appended. Only a key met on a stream of the same kind counts
        # (a plan request's key says nothing about a session of the same id).
        same_kind = ends and vocabulary.stream_kind(ends[0].type) == vocabulary.stream_kind(
            event_type
        )
        earlier = (
            same_kind and idempotency_key and store.key_event(stream_id, actor, idempotency_key)
        )
        if earlier:
            return Appended(earlier, created=False)
        raise
    handoff = None
    if event_type == vocabulary.START and record.plan is not None:
        record, handoff = start_on_node(record, plan, now, user)
    position = store.insert(record, idempotency_key)
    if position is None:  # its key was taken: the event first appended under it answers
        return Appended(_keyed(stream_id, actor, idempotency_key), created=False)
    after = projections.view_events_after(chosen, record)
    previous = ends[-1] if ends else None
    merge = None
    # A merge's report closes the session in the same transaction. When the stream had
    # only one place left, `_next_event` already wrote the close in the report's place
    # (`record.type` is then the close's), and there is nothing more to append.
    if record.type == event_type and work_rules.merges(
        event_type, fields, projections.status(chosen.events)
    ):
        # The same transaction closes the session: its worker is fenced from here on.
        merge = work_rules.merge_close(stream_id, record, record.seq + 1)
        store.insert(merge, work_rules.close_key(idempotency_key))
        after = projections.view_events_after(after, merge)
    return Appended(
        record,
        True,
        previous,
        view_events=after,
        last_attempt=handoff,
        position=position,
        merge_close=merge,
    )


def _keyed(stream_id: str, actor: str, idempotency_key: str | None) -> EventRecord:
    """The event `actor` appended to the stream under `idempotency_key`, which an insert
    found taken."""
    earlier = (
        store.key_event(stream_id, actor, idempotency_key) if idempotency_key is not None else None
    )
    if earlier is None:
        raise LookupError(f"no event of {actor!r} on {stream_id!r} holds that key")
    return earlier


def _next_event(
    append: Append, actor: str, now: datetime, chosen: list[EventRecord]
) -> EventRecord:
    """The event to append to a stream whose view depends on the events `chosen` (its
    first and last among them), or a `Refused` saying why it may not be."""
    stream_id, event_type, fields = append.stream_id, append.event_type, append.fields
    expected_seq = append.expected_seq
    ends = chosen[:1] + chosen[1:][-1:]
    kind, stream_kind = (
        vocabulary.stream_kind(event_type),
        vocabulary.stream_kind(ends[0].type if ends else None),
    )
    seq = ends[-1].seq if ends else 0
    beginning = event_type in (vocabulary.START, vocabulary.PLAN_CREATE)
    if ends and beginning:
        raise Conflict(
            f"{kind}_exists",
            f"The id {stream_id!r} is taken: a {stream_kind} with that id already exists.",
            stream_id,
        )
    if not beginning and stream_kind != kind:
        raise UnknownPlan(stream_id) if kind == "plan" else UnknownSession(stream_id)
    status = projections.status(chosen) if kind == "session" else None
    if status == vocabulary.CLOSED:
        # Before `expected_seq`: a fenced worker learns who closed its session, and why,
        # whatever else is wrong with its request.
        _check_transition(stream_id, event_type, status, chosen)
    if expected_seq is not None and expected_seq != seq:
        raise Conflict(
            "stale_expected_seq",
            f"The {kind} moved on: you expected seq {expected_seq}, but it is at seq {seq}.",
            stream_id,
        )
    if kind == "session":
        _check_transition(stream_id, event_type, status, chosen)
    if event_type == vocabulary.WORK:
        work_rules.check_pr_known(stream_id, fields)
    # The last place is kept for the close, so that a full session can always be closed;
    # after the close, a work report may take it.
    last_place = event_type == vocabulary.CLOSE or (
        status == vocabulary.CLOSED and event_type in vocabulary.AFTER_CLOSE
    )
    room = vocabulary.MAX_STREAM_EVENTS - (0 if last_place else 1)
    merging = work_rules.merges(event_type, fields, status)
    if seq >= room and not (merging and seq < vocabulary.MAX_STREAM_EVENTS):
        raise Conflict(
            "stream_full",
            f"The {kind} holds {seq} events, as many as one stream may hold; "
            + (
                "its last place is kept for session_close: close it and start a new session."
                if kind == "session"
                else "start a new plan."
            ),
            stream_id,
        )
    record = EventRecord._make(
        (
            stream_id,
            seq + 1,
            event_type,
            max(now, ends[-1].timestamp) if ends else now,
            actor,
            *map(fields.get, vocabulary.EVENT_FIELDS),
        )
    )
    if kind == "plan":
        _check_plan_event(stream_id, record)
    if merging and seq >= room:  # one place left: a merge appends only its close
        record = work_rules.merge_close(stream_id, record, seq + 1)
    return record


def _check_transition(
    stream_id: str, event_type: str, status: str | None, chosen: list[EventRecord]
) -> None:
    problem = vocabulary.transition_error(event_type, status)
    if problem:
        raise Conflict("transition_not_allowed", f"Refused: {problem}{_fenced(chosen)}.", stream_id)


def _fenced(chosen: list[EventRecord]) -> str:
    """What a refused append to a closed session is told: who closed it, and with what
    note (a reclaim's names the session that took the node; a merge's, the pull request)."""
    last = projections.last_transition(chosen)
    if last is None or last.type != vocabulary.CLOSE:
        return ""
    if last.outcome == vocabulary.LAPSED:
        return f" (it lapsed and was closed by {last.actor}: {last.note or 'released'})"
    return f" (closed by {last.actor}" + (f": {last.note})" if last.note else ")")


def _graph_refusal(error: plans.GraphError) -> InvalidEvent:
    return InvalidEvent({error.field: error.problem})


def _check_plan_event(plan_id: str, record: EventRecord) -> None:
    """The event must fit the plan's graph, and retire no node that has a live session."""
    graph = (plan_graphs.graph(plan_id) if record.seq > 1 else None) or plans.Graph()
    try:
        plans.apply(graph, record)
    except plans.GraphError as error:
        raise _graph_refusal(error) from None
    if record.retire:
        # Running and lapsed alike hold a live session: no lapse need be read.
        states = plan_sessions.node_states(plan_id, graph, record.timestamp, ()).states
        busy = [key for key in record.retire if states.get(key, ("",))[0] in plans.HELD]
        if busy:
            raise Conflict(
                "node_running",
                f"Node {busy[0]!r} has a live session; close it before retiring the node.",
                plan_id,
            )


def plan_state(
    plan_id: str, now: datetime | None = None, lapses_of: Collection[str] | None = None
) -> tuple[plans.Graph, plan_sessions.Found] | None:
    """The plan's graph and its nodes' states at `now`, lapses judged for the nodes
    `lapses_of` (default: all; with the keys of the claims made, when known), or None
    when there is no such plan."""
    graph = plan_graphs.graph(plan_id)
    if graph is None:
        return None
    return graph, plan_sessions.node_states(plan_id, graph, now, lapses_of)


def start_on_node(
    record: EventRecord, plan: tuple | None, now: datetime, user: User
) -> tuple[EventRecord, plans.Attempt | None]:
    """A start on a plan's node as it is written (the node's title when none is given),
    after reclaiming the node if it lapsed (with the handoff of the session it closed);
    or a refusal of a node that may not start."""
    plan_id, node_key = record.plan, record.node
    if plan_id is None or node_key is None:  # (the vocabulary asks for both or neither)
        raise InvalidEvent({"node": "a start on a plan names its node"})
    plan = plan or plan_state(plan_id, now, [node_key])
    if plan is None:
        raise InvalidEvent({"plan": f"there is no plan {plan_id!r}"})
    graph, found = plan
    states = found.states
    node = graph.nodes.get(node_key)
    if node is None:
        raise InvalidEvent({"node": f"plan {plan_id!r} has no node {node_key!r}"})
    state, session = states[node_key]
    waiting_on = [need for need in node.needs if states[need][0] != vocabulary.DONE]
    problem = {
        plans.RETIRED: "it is retired",
        vocabulary.DONE: "it is done",
        plans.RUNNING: f"session {session!r} is already working on it",
    }.get(state)
    if problem is None and waiting_on:
        problem = f"it needs {', '.join(repr(k) for k in waiting_on)} done first"
    if problem:
        raise Conflict(
            "node_not_ready",
            f"Node {node_key!r} of plan {plan_id!r} cannot start: {problem}.",
            plan_id,
        )
    spent = budget_model.spent_nodes(plan_id, graph, found.sessions, [node_key])
    if spent:
        raise Conflict(
            "budget_spent",
            f"Node {node_key!r} of plan {plan_id!r} cannot start: {spent[node_key].reason()}. "
            "A person may raise the budget (amend the plan).",
            plan_id,
        )
    attempts = found.attempts.get(node_key, 0)
    if state == plans.LAPSED and not plans.is_reclaimable(graph, states, node_key, attempts):
        raise Conflict(
            "attempts_exhausted",
            f"Node {node_key!r} of plan {plan_id!r} lapsed after {attempts} attempts, the "
            f"plan's cap (max_attempts {graph.max_attempts}): a person must close its "
            "session, or amend max_attempts.",
            plan_id,
        )
    handoff = _reclaim(graph, found, record, now, user) if state == plans.LAPSED else None
    return record._replace(title=record.title or node.title), handoff


def _reclaim(
    graph: plans.Graph, found: plan_sessions.Found, start: EventRecord, now: datetime, user: User
) -> plans.Attempt | None:
    """Close each unclosed session of a lapsed node (`outcome: lapsed`, the claimer as
    actor, a note saying since when it was silent and who took over), inside the
    start's transaction, which holds the plan; the handoff of the latest of them. Each
    session is held too, and checked again under its lock: if it has shown activity
    since, the start loses the race and is tried again (the node is running again)."""
    if graph.lease is None or start.node is None:  # (a lapse needs a lease, a start a node)
        return None
    unclosed = plans.unclosed_by_node(found.sessions).get(start.node, [])
    lease = timedelta(minutes=graph.lease)
    store.hold_also(*[i for i in unclosed if i not in found.held])
    handoff = None
    for session_id in unclosed:
        known = found.held.get(session_id) or store.read_view_events(
            session_id, vocabulary.MAX_BLOCKERS_SHOWN
        )
        events = known.events
        since = projections.last_activity(events)
        if since is None or not projections.has_lapsed(events, now, lease):
            raise store.RaceLost((start.plan, session_id))
        note = reclaims.reclaim_note(since, start.session, jsonl.format_timestamp)
        fields = {"outcome": vocabulary.LAPSED, "note": note}
        append_to_stream(
            Append(session_id, vocabulary.CLOSE, fields, user, now=now),
            HowMade(reclaiming=True, view_events=known),
        )
        progress = projections.progress(events)
        unread = tuple(projections.pending_messages(events))
        handoff = plans.Attempt(
            session_id,
            vocabulary.LAPSED,
            note,
            progress and progress.note,
            work_model.current_work(session_id),
            unread,
        )
    return handoff
