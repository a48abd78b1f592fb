"""Build plans: the graph a plan's events make, and every fact derived from it and from
its nodes' sessions. Pure: no Django, no clock, no I/O (docs/rules.md, "Build plans").

- `graph`: the graph and the rule of each plan event against it (`apply`);
- `states`: each node's state from its sessions, the ready order, the critical path;
- `liveness`: lapses at `now`, attempts, what may be reclaimed or claimed;
- `space`: which ready nodes may overlap a running node's paths, and the order that
  hands out the work that collides with none first;
- `view`: the plan's whole view (`plan_view`).

The package's namespace is the one callers use (`plans.READY`, `plans.apply`).
"""

from sessions.domain.plans.dispatched import DISPATCH_NOTE_SEQ_MOST, Dispatched, dispatched
from sessions.domain.plans.graph import (
    Graph,
    GraphError,
    Node,
    apply,
    graph_after,
    graph_of,
    topological,
)
from sessions.domain.plans.liveness import (
    Attempt,
    Handoff,
    Liveness,
    attempts_of,
    claimable_nodes,
    is_reclaimable,
    latest_closed,
    may_have_lapsed,
    ready_nodes,
    reclaim_allowed,
    unclosed_by_node,
    with_lapses,
)
from sessions.domain.plans.space import overlapping_last, overlaps
from sessions.domain.plans.states import (
    FAILED,
    HELD,
    MERGING,
    NODE_STATES,
    NOT_DONE,
    READY,
    RETIRED,
    RUNNING,
    UPSTREAM_FAILED,
    WAITING,
    NodeSession,
    critical_path,
    merge_candidates,
    node_states,
    node_states_after,
    opening_order,
    ranked,
    ready_order,
    sessions_as_of,
)
from sessions.domain.plans.view import (
    CANCELLED,
    OPEN,
    PLAN_STATUSES,
    Handoffs,
    NodeView,
    PlanSummary,
    PlanView,
    attempt_of,
    plan_summary_of,
    plan_view,
    plan_view_of,
    topological_keys,
)
from sessions.domain.vocabulary import LAPSED  # a node's state too

__all__ = [
    "CANCELLED",
    "DISPATCH_NOTE_SEQ_MOST",
    "FAILED",
    "HELD",
    "LAPSED",
    "MERGING",
    "NODE_STATES",
    "NOT_DONE",
    "OPEN",
    "PLAN_STATUSES",
    "READY",
    "RETIRED",
    "RUNNING",
    "UPSTREAM_FAILED",
    "WAITING",
    "Attempt",
    "Dispatched",
    "Graph",
    "GraphError",
    "Handoff",
    "Handoffs",
    "Liveness",
    "Node",
    "NodeSession",
    "NodeView",
    "PlanSummary",
    "PlanView",
    "apply",
    "attempt_of",
    "attempts_of",
    "claimable_nodes",
    "critical_path",
    "dispatched",
    "graph_after",
    "graph_of",
    "is_reclaimable",
    "latest_closed",
    "may_have_lapsed",
    "merge_candidates",
    "node_states",
    "node_states_after",
    "opening_order",
    "overlapping_last",
    "overlaps",
    "plan_summary_of",
    "plan_view",
    "plan_view_of",
    "ranked",
    "ready_nodes",
    "ready_order",
    "reclaim_allowed",
    "sessions_as_of",
    "topological",
    "topological_keys",
    "unclosed_by_node",
    "with_lapses",
]
