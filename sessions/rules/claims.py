"""Claims: the next node of a plan handed to one claimer, atomically, reclaiming a
lapsed node's silent sessions on the way (`append.start_on_node`)."""

from dataclasses import replace
from datetime import datetime, timedelta

from sessions import store
from sessions.domain import budgets, plans, projections, vocabulary
from sessions.readmodels import budgets as budget_model
from sessions.readmodels import plan_sessions, plan_views
from sessions.rules.append import (
    append_to_stream,
    key_errors,
    new_session_id,
    plan_state,
    retrying_races,
)
from sessions.rules.appends import Append, Appended, HowMade
from sessions.rules.permissions import User
from sessions.rules.refusals import Conflict, Forbidden, InvalidEvent, UnknownPlan


def _next_claimable(
    plan_id: str, graph: plans.Graph, found: plan_sessions.Found
) -> tuple[plans.Graph, plan_sessions.Found, str] | None:
    """The node a claim takes, with the states it was judged by: the first, in the ready
    list's order (those that may overlap a running node's paths last), of the ready
    nodes and the reclaimable lapsed ones whose budget is not spent (a claim that passes
    over one and finds nothing is refused `budget_spent`). Lapse is read one candidate
    at a time (a running node whose needs are done and whose attempts are under the
    cap), so a claim reads no more sessions than it passes over."""
    states, attempts = found.states, found.attempts

    def may_lapse(key: str) -> bool:
        allowed = plans.reclaim_allowed(graph, states, key, attempts.get(key, 0))
        return states[key][0] == plans.RUNNING and allowed

    plain = {key: state for key, (state, _) in states.items()}
    candidates = [k for k, state in plain.items() if state == plans.READY or may_lapse(k)]
    spent = budget_model.spent_nodes(plan_id, graph, found.sessions, candidates)
    passed_over = None
    ranked = plans.ranked(graph, plain, candidates)
    ranked = plans.overlapping_last(ranked, plans.overlaps(graph, plain, ranked))
    for key in ranked:
        if key in spent:
            ready = plain[key] == plans.READY
            if passed_over is None and (ready or _lapsed(graph, found, key, hold=False)):
                passed_over = spent[key]
            continue
        if plain[key] == plans.READY:
            return graph, found, key
        held = _lapsed(graph, found, key, hold=True)
        if held is not None:
            lapsed = {**states, key: (plans.LAPSED, states[key][1])}
            return graph, found._replace(states=lapsed, held=held), key
    if passed_over is not None:
        raise _budget_spent(plan_id, passed_over, "to claim")
    return None


def _budget_spent(plan_id: str, budget: budgets.Budget, what: str) -> Conflict:
    return Conflict(
        "budget_spent",
        f"Nothing of plan {plan_id!r} left {what} within its budgets: {budget.reason()}. "
        "A person may raise the budget (amend the plan).",
        plan_id,
    )


def _lapsed(
    graph: plans.Graph, found: plan_sessions.Found, key: str, hold: bool
) -> dict[str, projections.ViewEvents] | None:
    """For a claim passing over a running node: its unclosed sessions read (their view
    events) when every one has lapsed at `found.now`, else None. A session opened within
    the lease is not read (it cannot have lapsed). With `hold` (to reclaim the node),
    the others are read under their locks, so that the reclaim that follows needs
    neither again (a live worker's append waits for the claim's commit, a few
    milliseconds), and each must be closable; without (to word a refusal), they are
    only read."""
    if graph.lease is None:  # a plan with no lease (an older file's): nothing lapses
        return None
    unclosed = [s for s in found.sessions if s.node == key and s.outcome is None]
    lease = timedelta(minutes=graph.lease)
    if not unclosed or not all(plans.may_have_lapsed(s, found.now, lease) for s in unclosed):
        return None
    ids = [s.session for s in unclosed]
    if hold:
        store.hold_also(*ids)
    read = {i: store.read_view_events(i, vocabulary.MAX_BLOCKERS_SHOWN) for i in ids}
    if all(
        projections.has_lapsed(known.events, found.now, lease) and (not hold or _closable(known))
        for known in read.values()
    ):
        return read
    return None


def _closable(known: projections.ViewEvents) -> bool:
    """Whether a reclaim's close fits in the stream: one whose last place an older
    import filled otherwise cannot be closed, and a claim passes over its node rather
    than be jammed by it (the node waits for a person: retire it, or start it afresh)."""
    return bool(known.events) and known.events[-1].seq < vocabulary.MAX_STREAM_EVENTS


def claim_next(
    plan_id: str,
    *,
    user: User,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    agent: str | None = None,
) -> Appended:
    """Start a session on the plan's first ready node, atomically: claimers racing on
    one plan take turns holding it, so each gets a different node, or `nothing_ready`.
    A repeated `idempotency_key` of the same actor on the same plan returns the start it
    first made."""
    errors = key_errors(idempotency_key)
    if agent is not None and (problem := vocabulary.value_error(vocabulary.AGENT, agent)):
        errors[vocabulary.AGENT] = problem
    if errors:
        raise InvalidEvent(errors)
    if not user.is_authenticated:
        raise Forbidden("Sign in to claim work.")
    actor = user.get_username()

    def claim() -> Appended:
        session_id = new_session_id()  # anew on each try: its start is the only read of it
        with store.holding(plan_id, session_id):
            plan = plan_state(plan_id, now, lapses_of=())
            keys = plan[1].keys if plan is not None else None
            if idempotency_key is not None and (keys is None or (actor, idempotency_key) in keys):
                earlier = store.claim_event(plan_id, actor, idempotency_key)
                if earlier is not None:
                    return Appended(earlier, created=False)
            if plan is None:
                raise UnknownPlan(plan_id)
            claimable = _next_claimable(plan_id, *plan)
            if claimable is None:
                raise Conflict(
                    "nothing_ready",
                    f"No node of plan {plan_id!r} is ready or reclaimable: every live node is "
                    "done, running, failed, waiting on others, or lapsed past its attempts.",
                    plan_id,
                )
            graph, found, key = claimable
            fields = {"plan": plan_id, "node": key, vocabulary.AGENT: agent}
            started = append_to_stream(
                Append(session_id, vocabulary.START, fields, user, None, idempotency_key, now),
                HowMade(plan=(graph, found), fresh=True),
            )
            started = replace(started, brief=graph.nodes[key].brief)
            if started.last_attempt is not None or not found.attempts.get(key):
                return started  # a reclaim's handoff, or a node never tried
            last = plan_views.last_attempt(plan_id, key, before=session_id)
            return replace(started, last_attempt=last)

    return retrying_races(lambda _: claim())
