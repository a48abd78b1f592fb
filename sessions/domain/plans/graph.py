"""A plan's graph: what its events make of it. `apply` is the rule of one plan event
against the graph so far: it returns the new graph or raises `GraphError` naming the
field and what is wrong (unknown or repeated keys, a missing edge, a cycle, a retire
that would strand a node)."""

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from sessions.domain import paths
from sessions.domain.records import EventRecord
from sessions.domain.vocabulary import (
    MAX_PLAN_KEYS,
    MAX_PLAN_NODES,
    PLAN_AMEND,
    PLAN_CREATE,
)


class GraphError(ValueError):
    """A plan event that does not fit the graph: `field` is the event field at fault."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"{field_name} {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class Node:
    key: str
    title: str
    needs: tuple[str, ...] = ()
    retired: bool = False
    paths: tuple[str, ...] = ()  # the path patterns it will touch in the plan's repo
    budget_usd: int | float | None = None  # US dollars it may spend, all attempts
    brief: str | None = None  # the text an agent is given to do it


@dataclass(frozen=True)
class Graph:
    """A plan's nodes in plan order (the order they were added), retired ones included,
    and the liveness settings in force: its lease in minutes and its cap on attempts
    (None when the plan's events never named them: an older file)."""

    nodes: dict[str, Node] = field(default_factory=dict)
    lease: int | None = None
    max_attempts: int | None = None
    done_when: str = "close"  # what makes a node done: its session's close, or a merge
    repo: str | None = None  # the repository its nodes' paths are in (owner/name)
    budget_usd: int | float | None = None  # US dollars the plan may spend, all nodes
    # When each budget in force was set (by the plan event that set it): the plan's under
    # None, a node's under its key (docs/rules.md, "Spend": over budget "since" the later of the
    # crossing and this).
    budget_set_at: dict = field(default_factory=dict)

    def live(self) -> list[Node]:
        return [node for node in self.nodes.values() if not node.retired]

    @functools.cached_property
    def path_index(self) -> paths.OverlapIndex:
        """The live nodes' path patterns, indexed by their literal prefixes (worked out
        once per graph: a kept graph serves many reservation reads)."""
        return paths.OverlapIndex(
            {key: node.paths for key, node in self.nodes.items() if node.paths and not node.retired}
        )

    @functools.cached_property
    def literal_prefixes(self) -> dict[str, frozenset[tuple[str, ...]]]:
        """Each node with paths: the distinct literal prefixes of its patterns (worked
        out once per graph: every view asks which running nodes they may overlap)."""
        return {
            key: frozenset(paths.literal_prefix(pattern) for pattern in node.paths)
            for key, node in self.nodes.items()
            if node.paths
        }

    @functools.cached_property
    def order(self) -> list[str]:
        """Every node's key after the keys it needs (worked out once per graph: a kept
        graph serves many claims)."""
        return topological({key: node.needs for key, node in self.nodes.items()})


def _cycle(nodes: dict[str, Node]) -> list[str] | None:
    """A cycle among the live nodes' needs, as keys `[a, b, …, a]`, or None."""
    live = {key: node for key, node in nodes.items() if not node.retired}
    finished: set[str] = set()
    for root in live:
        if root in finished:
            continue
        path: list[str] = [root]
        on_path = {root}
        stack = [iter(live[root].needs)]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                left = path.pop()
                on_path.discard(left)
                finished.add(left)
                continue
            if step in on_path:
                return [*path[path.index(step) :], step]
            if step in finished or step not in live:
                continue
            path.append(step)
            on_path.add(step)
            stack.append(iter(live[step].needs))
    return None


def _add_nodes(nodes: dict[str, Node], added: Sequence[dict]) -> None:
    new_keys: set[str] = set()
    for index, given in enumerate(added):
        key = given["key"]
        if key in nodes or key in new_keys:
            where = "is already a key of this plan" if key in nodes else "is given twice"
            raise GraphError("nodes", f"[{index}] key {key!r} {where} (keys are never reused)")
        new_keys.add(key)
    live_keys = {key for key, node in nodes.items() if not node.retired} | new_keys
    for index, given in enumerate(added):
        for need in given.get("needs") or ():
            if need not in live_keys:
                what = "a retired node" if need in nodes else "no node of this plan"
                raise GraphError("nodes", f"[{index}] {given['key']!r} needs {need!r}, {what}")
        nodes[given["key"]] = Node(
            given["key"],
            given["title"],
            tuple(given.get("needs") or ()),
            paths=tuple(given.get("paths") or ()),
            budget_usd=given.get("budget_usd"),
            brief=given.get("brief"),
        )


def _set_per_node(nodes: dict[str, Node], name: str, given: dict, field_name: str) -> None:
    """An amend's `{key: value or null}` for the live nodes' budgets, paths or briefs."""
    for key, value in given.items():
        if key not in nodes or nodes[key].retired:
            what = "a retired node" if key in nodes else "no node of this plan"
            raise GraphError(name, f"[{key!r}] is {what}")
        if field_name == "paths":
            value = tuple(value or ())
        nodes[key] = replace(nodes[key], **{field_name: value})


def apply(graph: Graph, event: EventRecord) -> Graph:
    """The graph after a plan event, or `GraphError` when the event does not fit it."""
    if event.type == PLAN_CREATE and graph.nodes:
        raise GraphError("type", "plan_create must be the plan's first event")
    if event.type == PLAN_AMEND and not graph.nodes:
        raise GraphError("type", "a plan begins with plan_create")
    nodes = dict(graph.nodes)
    _add_nodes(nodes, event.nodes or ())
    for index, edge in enumerate(event.drop_needs or ()):
        node = nodes.get(edge["node"])
        if node is None or edge["needs"] not in node.needs:
            raise GraphError(
                "drop_needs", f"[{index}] {edge['node']!r} does not need {edge['needs']!r}"
            )
        nodes[node.key] = replace(node, needs=tuple(n for n in node.needs if n != edge["needs"]))
    for index, edge in enumerate(event.needs or ()):
        for end in (edge["node"], edge["needs"]):
            if end not in nodes or nodes[end].retired:
                what = "a retired node" if end in nodes else "no node of this plan"
                raise GraphError("needs", f"[{index}] {end!r} is {what}")
        node = nodes[edge["node"]]
        if edge["needs"] in node.needs:
            raise GraphError("needs", f"[{index}] {node.key!r} already needs {edge['needs']!r}")
        nodes[node.key] = replace(node, needs=(*node.needs, edge["needs"]))
    for index, key in enumerate(event.retire or ()):
        if key not in nodes or nodes[key].retired:
            what = "already retired" if key in nodes else "no node of this plan"
            raise GraphError("retire", f"[{index}] {key!r} is {what}")
        nodes[key] = replace(nodes[key], retired=True)
    _set_per_node(nodes, "budgets", event.budgets or {}, "budget_usd")
    # An amend's `paths` is a map (a heartbeat's, which never reaches here, a list).
    _set_per_node(nodes, "paths", event.paths if isinstance(event.paths, dict) else {}, "paths")
    _set_per_node(nodes, "briefs", event.briefs or {}, "brief")
    retired_now = set(event.retire or ())
    for node in nodes.values():
        if not node.retired:
            stranded = [need for need in node.needs if need in retired_now]
            if stranded:
                raise GraphError(
                    "retire",
                    f"{stranded[0]!r} cannot be retired: {node.key!r} still needs it "
                    "(drop that need or retire it too)",
                )
    if len(nodes) > MAX_PLAN_KEYS:
        raise GraphError("nodes", f"a plan may hold at most {MAX_PLAN_KEYS} keys in all")
    if sum(1 for node in nodes.values() if not node.retired) > MAX_PLAN_NODES:
        raise GraphError("nodes", f"a plan may hold at most {MAX_PLAN_NODES} live nodes")
    cycle = _cycle(nodes)
    if cycle:
        where = "nodes" if event.type == PLAN_CREATE or not event.needs else "needs"
        raise GraphError(where, f"would make a cycle: {' → '.join(cycle)}")
    return Graph(
        nodes,
        graph.lease if event.lease is None else event.lease,
        graph.max_attempts if event.max_attempts is None else event.max_attempts,
        graph.done_when if event.done_when is None else event.done_when,
        graph.repo if event.repo is None else event.repo,
        graph.budget_usd if event.budget_usd is None else (event.budget_usd or None),
        _budgets_set(graph, event),
    )


def _budgets_set(graph: Graph, event: EventRecord) -> dict:
    """When each budget was set, after `event`: the plan's, and each node's it names."""
    moments = dict(graph.budget_set_at)
    if event.budget_usd is not None:
        moments[None] = event.timestamp
    for given in event.nodes or ():
        if given.get("budget_usd") is not None:
            moments[given["key"]] = event.timestamp
    for key in event.budgets or {}:
        moments[key] = event.timestamp
    return moments


def graph_of(events: Iterable[EventRecord]) -> Graph:
    """The graph of a plan's stored events. Each was checked when written; one that no
    longer fits (an odd imported history) is passed over rather than raised."""
    return graph_after(Graph(), events)


def graph_after(graph: Graph, events: Iterable[EventRecord]) -> Graph:
    """`graph` with later stored events folded in, as `graph_of` folds them."""
    for event in events:
        try:
            graph = apply(graph, event)
        except GraphError:
            continue
    return graph


def topological(needs: dict[str, Sequence[str]]) -> list[str]:
    """Every key of `needs` (key → the keys it needs), each after the keys it needs,
    given order otherwise."""
    order: list[str] = []
    seen: set[str] = set()
    for root in needs:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(needs[root]))]
        while stack:
            key, pending = stack[-1]
            need = next(pending, None)
            if need is None:
                stack.pop()
                order.append(key)
            elif need in needs and need not in seen:
                seen.add(need)
                stack.append((need, iter(needs[need])))
    return order
