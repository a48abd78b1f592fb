"""Reservations now (docs/rules.md, "Space"): each running node of a plan whose repo is the
one asked about holds its paths there; a lapsed node (its lease run out) or a closed
session holds nothing. Worked out at each read: lapse depends on `now`."""

from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone

from sessions import store
from sessions.domain import paths, plans, projections, vocabulary
from sessions.readmodels import plan_graphs
from sessions.store import space


class Reservation(NamedTuple):
    plan: str
    node: str
    session: str
    owner: str
    paths: tuple[str, ...]
    agent: str | None  # the agent that started the session, if one did (v5)


def reservations(
    repo: str, path: str | None = None, now: datetime | None = None
) -> list[Reservation]:
    """The reservations in `repo` (compared case-insensitively), by plan id then plan
    order; with `path`, only those whose patterns cover it. Three statements: the plans
    naming the repo, their unclosed node sessions, and the last activity of those that
    may hold it."""
    now = timezone.now() if now is None else now
    graphs = {}
    for plan_id in space.plans_naming(repo):
        graph = plan_graphs.graph(plan_id)
        if graph is not None and graph.repo is not None and graph.repo.lower() == repo.lower():
            graphs[plan_id] = graph
    unclosed = space.unclosed_on(list(graphs))
    if path is None:
        unclosed = [s for s in unclosed if _has_paths(graphs[s.plan], s.node)]
    else:
        # Only the running nodes' patterns are matched (a plan's other nodes may hold
        # thousands), and of those only the ones whose literal prefix leads the path.
        running: dict[str, set[str]] = {}
        for session in unclosed:
            running.setdefault(session.plan, set()).add(session.node)
        covering = {
            plan_id: graphs[plan_id].path_index.covering(path, among=keys)
            for plan_id, keys in running.items()
        }
        unclosed = [s for s in unclosed if s.node in covering[s.plan]]
    liveness = store.liveness_of([session.session for session in unclosed])
    holding: dict[tuple[str, str], list[space.Unclosed]] = {}
    for session in unclosed:
        holding.setdefault((session.plan, session.node), []).append(session)
    found = []
    for plan_id, graph in sorted(graphs.items()):
        lease = None if graph.lease is None else timedelta(minutes=graph.lease)
        for key, node in graph.nodes.items():
            sessions = holding.get((plan_id, key))
            if not sessions or _lapsed(sessions, liveness, lease, now):
                continue
            latest = max(sessions, key=lambda s: (s.opened_at, s.session))
            found.append(
                Reservation(plan_id, key, latest.session, latest.owner, node.paths, latest.agent)
            )
    return found


def _has_paths(graph: plans.Graph, key: str) -> bool:
    node = graph.nodes.get(key)
    return node is not None and bool(node.paths)


def _lapsed(
    sessions: list[space.Unclosed],
    liveness: dict[str, plans.Liveness],
    lease: timedelta | None,
    now: datetime,
) -> bool:
    """Whether every one of a node's unclosed sessions has lapsed (`plans.with_lapses`'
    rule: active and silent past the lease)."""

    def silent(session: space.Unclosed) -> bool:
        live = liveness.get(session.session)
        return (
            live is not None
            and live.status == vocabulary.ACTIVE
            and projections.is_lapsed(live.last_activity, now, lease)
        )

    return all(silent(session) for session in sessions)


class SessionSpace(NamedTuple):
    repo: str | None  # its plan's repository
    holds: tuple[str, ...]  # what its node holds now (nothing unless it runs it)
    others: list[tuple[str, Reservation]]  # (a path it touched, another's reservation of it)


def session_space(plan_id: str | None, node: str | None, session: str, touched: list[str]):
    """What a session's node holds in its plan's repo, and who else holds the paths it
    touched (its page's "Space"); None for a session on no plan with a repo."""
    graph = plan_graphs.graph(plan_id) if plan_id else None
    if graph is None or graph.repo is None:
        return None
    held = reservations(graph.repo)
    holds = next((r.paths for r in held if r.session == session), ())
    others = [
        (path, reservation)
        for path in touched
        for reservation in held
        if reservation.session != session and any(paths.matches(p, path) for p in reservation.paths)
    ]
    return SessionSpace(graph.repo, holds, others)
