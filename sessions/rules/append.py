"""The rules of writing, and the only writes there are: `append_event` for every surface,
`import_stream` for JSONL.

Both check events against the vocabulary and the transition table, then write through
the store (`store.holding`), which holds the stream against other writers; the unique
(session, seq) constraint remains the last line of defence, and a violation there means
another writer won a race, so we retry against the new tail. Refusals are domain errors
with a code and a sentence; each surface (API, forms, commands) says them its own way.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from sessions import store
from sessions.domain import plans, projections, vocabulary
from sessions.domain.records import EventRecord
from sessions.readmodels import kept, plan_graphs, plan_sessions

ACT_ON_ANY_SESSION = "tower.act_on_any_session"
# Who asks: a signed-in person or agent, or nobody (refused).
User = AbstractBaseUser | AnonymousUser
_ATTEMPTS = 20


class Refused(Exception):
    """Base of every refusal: `code` names it for programs, `detail` says it to people."""

    code = "invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def status_of(refusal: Refused, statuses: dict[type, int]) -> int:
    """The status a surface gives a refusal: that of its nearest class in `statuses`."""
    return next((statuses[cls] for cls in type(refusal).__mro__ if cls in statuses), 400)


class InvalidEvent(Refused):
    """The input breaks the vocabulary. `errors` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        detail = "; ".join(f"{name} {problem}" for name, problem in errors.items())
        super().__init__(f"Invalid event: {detail}.")


class Forbidden(Refused):
    code = "forbidden"


class UnknownSession(Refused):
    code = "not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"There is no session {session_id!r}.")


class UnknownPlan(UnknownSession):
    def __init__(self, plan_id: str) -> None:
        Refused.__init__(self, f"There is no plan {plan_id!r}.")


class Conflict(Refused):
    """Refused because of the stream's current state, which `session_id` names."""

    def __init__(self, code: str, detail: str, session_id: str) -> None:
        super().__init__(detail)
        self.code = code
        self.session_id = session_id


@dataclass(frozen=True)
class Appended:
    event: EventRecord
    created: bool  # False when an idempotency key repeated an earlier append
    previous: EventRecord | None = None  # the stream's last event before a new one
    # A new event's stream: the events its view now depends on and its open blocks'
    # count (`projections.view_events`), so that an answer need not read them again.
    view_events: tuple[list[EventRecord], int] | None = None


def new_session_id() -> str:
    return secrets.token_hex(6)


def may_act(user: User, session_owner: str | None) -> bool:
    """Whether `user` may append to a session owned by `session_owner`."""
    if not user.is_authenticated:
        return False
    return user.get_username() == session_owner or user.has_perm(ACT_ON_ANY_SESSION)


def _key_errors(idempotency_key: str | None) -> dict[str, str]:
    """What is wrong with an idempotency key (none when absent)."""
    if idempotency_key is None:
        return {}
    problem = vocabulary.text_error(idempotency_key, vocabulary.IDEMPOTENCY_KEY_MAX)
    return {"idempotency_key": problem} if problem else {}


def _checked(stream_id, event_type, fields, user, expected_seq, idempotency_key):
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
    errors.update(_key_errors(idempotency_key))
    if errors:
        raise InvalidEvent(errors)
    if not user.is_authenticated:
        raise Forbidden("Sign in to append events.")
    return vocabulary.canonical_fields(fields)


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
    args = (stream_id, event_type, fields, user, expected_seq, idempotency_key, now)
    # A plan event's checks read its nodes' sessions, so it always holds the plan: a
    # start on a node (which holds the plan too) cannot slip in between.
    held = event_type in vocabulary.PLAN_EVENT_TYPES
    result = _retrying_races(lambda attempt: _append_once(streams, held or attempt > 0, *args))
    if result.previous is not None:
        # Committed: the process's read models take it in without asking again.
        kept.appended(result.previous, result.event)
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
    # A retry is answered without taking any lock (on SQLite, the one writer's turn).
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
            return _append_to_stream(
                stream_id, event_type, fields, user, None, idempotency_key, now, fresh=True
            )

    return _retrying_races(lambda _: start())


def _retrying_races(write):
    """`write(attempt)`, numbered from 0, until it does not lose a race."""
    for attempt in range(_ATTEMPTS - 1):
        try:
            return write(attempt)
        except store.RaceLost:
            continue  # another writer took this seq first: read the new tail, try again
    return write(_ATTEMPTS - 1)


def _append_once(streams, locked, *args):
    # A first try may run without the streams' lock (`store.appending`); after a lost
    # race the append holds it, so no writer loses twice to a busy stream.
    with store.appending(*streams, locked=locked):
        return _append_to_stream(*args)


def _kind(event_type: str | None) -> str | None:
    if event_type is None:
        return None
    return "plan" if event_type in vocabulary.PLAN_EVENT_TYPES else "session"


def _append_to_stream(
    stream_id, event_type, fields, user, expected_seq, idempotency_key, now, plan=None, fresh=False
):
    """The append inside `store.appending`; `plan` is the plan's graph and node states
    when the caller has just worked them out (a claim), so that a start on a node does
    so once; `fresh` says the stream's id was just made (a claim's), so there is nothing
    to read of it (were it taken after all, the insert fails and the caller tries again).

    The idempotency key is checked by the insert, and before a refusal: either way an
    append made earlier under the key is answered with, whatever happened since."""
    chosen, open_blocks = (
        ([], 0) if fresh else store.read_view_events(stream_id, vocabulary.MAX_BLOCKERS_SHOWN)
    )
    ends = chosen[:1] + chosen[1:][-1:]
    actor = user.get_username()
    owner = ends[0].actor if ends else None
    if ends and not may_act(user, owner):
        raise Forbidden(
            f"Only the {_kind(ends[0].type)}'s owner ({owner}) or someone allowed "
            f"to act on any session may change it."
        )
    try:
        record = _next_event(stream_id, event_type, fields, actor, expected_seq, now, plan, ends)
    except Refused:
        # Not for a request of the other kind on the same id (a session's on a plan's).
        same_kind = ends and _kind(ends[0].type) == _kind(event_type)
        earlier = (
            same_kind and idempotency_key and store.key_event(stream_id, actor, idempotency_key)
        )
        if earlier:
            return Appended(earlier, created=False)
        raise
    if store.insert(record, idempotency_key) is None:
        return Appended(store.key_event(stream_id, actor, idempotency_key), created=False)
    after = projections.view_events_after(chosen, open_blocks, record)
    return Appended(record, created=True, previous=ends[-1] if ends else None, view_events=after)


def _next_event(stream_id, event_type, fields, actor, expected_seq, now, plan, ends):
    """The event to append to a stream whose first and last events are `ends`, or a
    `Refused` saying why it may not be."""
    kind, stream_kind = _kind(event_type), _kind(ends[0].type if ends else None)
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
    if expected_seq is not None and expected_seq != seq:
        raise Conflict(
            "stale_expected_seq",
            f"The {kind} moved on: you expected seq {expected_seq}, but it is at seq {seq}.",
            stream_id,
        )
    if kind == "session":
        problem = vocabulary.transition_error(event_type, projections.status(ends))
        if problem:
            raise Conflict("transition_not_allowed", f"Refused: {problem}.", stream_id)
    # The last place is kept for the close, so that a full session can always be closed.
    room = vocabulary.MAX_STREAM_EVENTS - (0 if event_type == vocabulary.CLOSE else 1)
    if seq >= room:
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
    now = now or timezone.now()
    record = EventRecord(
        stream_id,
        seq + 1,
        event_type,
        max(now, ends[-1].timestamp) if ends else now,
        actor,
        *(fields.get(name) for name in vocabulary.EVENT_FIELDS),
    )
    if kind == "plan":
        _check_plan_event(stream_id, record)
    elif event_type == vocabulary.START and record.plan is not None:
        title = _check_node_start(record.plan, record.node, record.title, plan)
        record = record._replace(title=title)
    return record


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
        states = plan_sessions.node_states(plan_id, graph).states
        busy = [key for key in record.retire if states.get(key, ("",))[0] == plans.RUNNING]
        if busy:
            raise Conflict(
                "node_running",
                f"Node {busy[0]!r} has a live session; close it before retiring the node.",
                plan_id,
            )


def _plan_state(plan_id: str) -> tuple[plans.Graph, plan_sessions.Found] | None:
    """The plan's graph and its nodes' states (with the keys of the claims made, when
    known), or None when there is no such plan."""
    graph = plan_graphs.graph(plan_id)
    if graph is None:
        return None
    return graph, plan_sessions.node_states(plan_id, graph)


def _check_node_start(
    plan_id: str, node_key: str, title: str | None, plan: tuple | None = None
) -> str:
    """Refuse a start on a node that may not start now; the session's title (the
    node's when none is given)."""
    plan = plan or _plan_state(plan_id)
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
    return title or node.title


def claim_next(
    plan_id: str,
    *,
    user: User,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> Appended:
    """Start a session on the plan's first ready node, atomically: claimers racing on
    one plan take turns holding it, so each gets a different node, or `nothing_ready`.
    A repeated `idempotency_key` of the same actor on the same plan returns the start it
    first made."""
    if errors := _key_errors(idempotency_key):
        raise InvalidEvent(errors)
    if not user.is_authenticated:
        raise Forbidden("Sign in to claim work.")
    actor = user.get_username()

    def claim() -> Appended:
        session_id = new_session_id()  # anew on each try: its start is the only read of it
        with store.holding(plan_id, session_id):
            plan = _plan_state(plan_id)
            keys = plan[1].keys if plan is not None else None
            if idempotency_key is not None and (keys is None or (actor, idempotency_key) in keys):
                earlier = store.claim_event(plan_id, actor, idempotency_key)
                if earlier is not None:
                    return Appended(earlier, created=False)
            if plan is None:
                raise UnknownPlan(plan_id)
            ready = plans.ready_nodes(plan[0], plan[1].states)
            if not ready:
                raise Conflict(
                    "nothing_ready",
                    f"No node of plan {plan_id!r} is ready: every live node is done, running, "
                    "failed or waiting on others.",
                    plan_id,
                )
            fields = {"plan": plan_id, "node": ready[0]}
            return _append_to_stream(
                session_id,
                vocabulary.START,
                fields,
                user,
                None,
                idempotency_key,
                now,
                plan=plan,
                fresh=True,
            )

    return _retrying_races(lambda _: claim())


class StreamMismatch(Refused):
    code = "exists_differently"


def import_stream(session_id: str, records: list[EventRecord]) -> bool:
    """Store a whole validated stream (from JSONL) in one transaction.

    Returns True when written, False when the session already holds exactly these
    events; raises `StreamMismatch` when it holds different ones.
    """
    records = list(records)
    # A start on a plan's node holds the plan, as every such start does (`plan_sessions`).
    plan = records[0].plan if records and records[0].type == vocabulary.START else None
    with store.holding(*((plan, session_id) if plan else (session_id,))):
        existing = store.read_stream(session_id)
        if existing:
            if existing == records:
                return False
            raise StreamMismatch(
                f"Session {session_id!r} already exists with different events "
                f"({len(existing)} stored, {len(records)} in the file)."
            )
        store.insert_many(records)
    return True
