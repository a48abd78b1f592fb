"""Budgets (docs/rules.md, "Spend"): what a node and its plan may spend, and whether either is
spent. Pure: the costs come in, already rolled up by `spend`.

A node is over budget when its cost reaches its own budget, or its plan's cost reaches
the plan's. The budget that *binds* a node is the one to show: its own when spent, else
the plan's when spent, else its own when it has one, else the plan's.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sessions.domain import spend
from sessions.domain.plans.graph import Graph
from sessions.domain.plans.view import PlanView
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import TOKEN_FIELDS, dollars

NODE, PLAN = "node", "plan"
OVER_BUDGET = "over_budget"  # the attention of a session whose node's budget is spent


@dataclass(frozen=True)
class Budget:
    scope: str  # NODE or PLAN
    owner: str  # the node's key, or the plan's id
    limit_usd: Decimal
    spent_usd: Decimal
    set_at: datetime | None = None  # when the plan event that set it was written

    @property
    def over(self) -> bool:
        return self.spent_usd >= self.limit_usd

    def reason(self) -> str:
        """What the agent's hooks block its session with, and what a refusal says."""
        spent, limit = spend.dollars(self.spent_usd), spend.dollars(self.limit_usd)
        return f"budget spent: {spent} of {limit} ({self.scope} {self.owner})"


def binding(
    graph: Graph, plan_id: str, key: str, node_cost: Decimal, plan_cost: Decimal
) -> Budget | None:
    """The budget that binds node `key` (None when neither it nor its plan has one),
    with what each has spent."""
    node = graph.nodes.get(key)
    own = None
    if node is not None and node.budget_usd is not None:
        own = Budget(NODE, key, dollars(node.budget_usd), node_cost, graph.budget_set_at.get(key))
    whole = None
    if graph.budget_usd is not None:
        whole = Budget(
            PLAN, plan_id, dollars(graph.budget_usd), plan_cost, graph.budget_set_at.get(None)
        )
    for candidate in (own, whole):
        if candidate is not None and candidate.over:
            return candidate
    return own or whole


def has_budgets(graph: Graph) -> bool:
    return graph.budget_usd is not None or any(
        node.budget_usd is not None for node in graph.nodes.values()
    )


def spent_in_view(view: PlanView) -> set[str]:
    """The keys of a plan view's nodes whose own budget, or whose plan's, is spent."""

    def spent(limit: int | float | None, usage: spend.Usage | None) -> bool:
        return limit is not None and spent_of(usage) >= dollars(limit)

    if spent(view.budget_usd, view.usage):
        return {node.key for node in view.nodes}
    return {node.key for node in view.nodes if spent(node.budget_usd, node.usage)}


def spent_of(usage: spend.Usage | None) -> Decimal:
    """What a `spend.Usage` cost, 0 for none."""
    return usage.cost_usd if usage is not None else Decimal(0)


def crossed_at(
    reports: Iterable[EventRecord], prices: spend.PriceTable, limit: Decimal
) -> datetime | None:
    """The moment of the usage report (in time order) that took the cost of `reports`
    (one node's sessions', or a plan's) to `limit`, or None when it never got there.
    Reports are totals: each (session, model) counts its latest, largest figures."""
    counted: dict[tuple[str, str], Decimal] = {}
    cost = Decimal(0)
    for report in sorted(reports, key=lambda event: event.timestamp):
        if report.model is None:  # (a usage report always names its model)
            continue
        price = spend.price_of(report.model, prices)
        if price is None:
            continue
        figures = [getattr(report, name) for name in TOKEN_FIELDS]
        now = spend.model_cost(figures, price)
        before = counted.get((report.session, report.model), Decimal(0))
        if now > before:
            cost += now - before
            counted[report.session, report.model] = now
        if cost >= limit:
            return report.timestamp
    return None
