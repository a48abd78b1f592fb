"""Budgets now (docs/rules.md, "Spend"): the budget binding each node of a plan, from the
plan's graph (the budgets in force) and what its nodes spent (`spend.plan_usages`), and
since when a spent one has been spent."""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from sessions import config, store
from sessions.domain import budgets, plans, vocabulary
from sessions.domain.budgets import Budget
from sessions.domain.plans import NodeSession
from sessions.readmodels import plan_graphs
from sessions.readmodels import spend as spend_model
from sessions.store import spend as spend_rows


def node_budgets(
    plan_id: str, graph: plans.Graph, on_nodes: Sequence[NodeSession], keys: Sequence[str]
) -> dict[str, Budget]:
    """The budget binding each of `keys` (those with one), `on_nodes` being the plan's
    node sessions. Reads nothing for a plan without budgets."""
    if not budgets.has_budgets(graph):
        return {}
    spent = spend_model.plan_usages(plan_id, on_nodes)
    plan_cost = budgets.spent_of(spent.total)
    found = {}
    for key in keys:
        budget = budgets.binding(
            graph, plan_id, key, budgets.spent_of(spent.nodes.get(key)), plan_cost
        )
        if budget is not None:
            found[key] = budget
    return found


def spent_nodes(
    plan_id: str, graph: plans.Graph, on_nodes: Sequence[NodeSession], keys: Sequence[str]
) -> dict[str, Budget]:
    """Of `keys`, the nodes over budget, each with the budget that is spent."""
    found = node_budgets(plan_id, graph, on_nodes, keys)
    return {key: budget for key, budget in found.items() if budget.over}


class NodeBudget(NamedTuple):
    budget: Budget
    spent_since: datetime | None  # when asked for and spent: since when (`spent_since`)


def node_budget(
    plan_id: str, graph: plans.Graph, key: str, since: bool = False
) -> NodeBudget | None:
    """The budget binding one node of the plan now (a session view's), or None, and with
    `since`, since when it has been spent if it is; reads nothing for a plan without
    budgets, and the plan's node sessions once."""
    if key not in graph.nodes or not budgets.has_budgets(graph):
        return None
    on_nodes = store.node_sessions(plan_id)
    budget = node_budgets(plan_id, graph, on_nodes, [key]).get(key)
    if budget is None:
        return None
    spent = spent_since(key, budget, on_nodes) if since and budget.over else None
    return NodeBudget(budget, spent)


def spent_since(key: str, budget: Budget, on_nodes: Sequence[NodeSession]) -> datetime:
    """Since when a spent `budget` of node `key` has been spent (`on_nodes` being its
    plan's node sessions): the later of the usage report that took the spend to it and
    the plan event that set it."""
    if budget.scope == budgets.NODE:
        on_nodes = [session for session in on_nodes if session.node == key]
    reports = spend_rows.usage_reports([session.session for session in on_nodes])
    crossed = budgets.crossed_at(reports, config.prices(), budget.limit_usd)
    moments = [moment for moment in (crossed, budget.set_at) if moment is not None]
    return max(moments) if moments else reports[-1].timestamp


def spent_sessions(rows: Iterable) -> dict[str, datetime]:
    """Of board rows (`store.BoardRow`), the unclosed sessions on nodes whose budget is
    spent, each with since when. Reads only the plans with budgets."""
    by_plan: dict[str, set[str]] = {}
    for row in rows:
        if row.plan is not None and row.status != vocabulary.CLOSED:
            by_plan.setdefault(row.plan, set()).add(row.session)
    found = {}
    for plan_id, sessions in by_plan.items():
        graph = plan_graphs.graph(plan_id)
        if graph is None or not budgets.has_budgets(graph):
            continue
        on_nodes = store.node_sessions(plan_id)
        node_of = {s.session: s.node for s in on_nodes if s.session in sessions}
        spent = spent_nodes(plan_id, graph, on_nodes, sorted(set(node_of.values())))
        since = {key: spent_since(key, budget, on_nodes) for key, budget in spent.items()}
        for session_id, key in node_of.items():
            if key in since:
                found[session_id] = since[key]
    return found
