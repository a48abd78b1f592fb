"""Space in a plan (docs/rules.md, "Space"): which ready or reclaimable
nodes may overlap the paths of a running node, and the order that hands out first the
work that collides with none. Pure."""

from collections.abc import Iterable, Sequence

from sessions.domain import paths
from sessions.domain.plans.graph import Graph
from sessions.domain.plans.states import RUNNING


def overlaps(graph: Graph, states: dict[str, str], keys: Iterable[str]) -> dict[str, list[str]]:
    """For each of `keys` with paths, the running nodes (`states`: key → state) whose
    paths may overlap its own, in plan order; the keys overlapping none left out. The
    running nodes' literal prefixes are indexed once (`paths.OverlapIndex`), and each
    node asks once per distinct prefix of its patterns: bounded by the plan's size, not
    by how its patterns are spelt."""
    running = {
        key: node.paths
        for key, node in graph.nodes.items()
        if node.paths and states.get(key) == RUNNING
    }
    if not running:
        return {}
    index = paths.OverlapIndex(running)
    position = {key: place for place, key in enumerate(graph.nodes)}
    prefixes = graph.literal_prefixes
    found = {}
    for key in keys:
        owners = set().union(*map(index.owners_of_prefix, prefixes.get(key, ()))) - {key}
        if owners:
            found[key] = sorted(owners, key=position.__getitem__)
    return found


def overlapping_last(order: Sequence[str], overlapping: Iterable[str]) -> list[str]:
    """`order` with the keys that overlap a running node after every key that overlaps
    none, each group keeping its order."""
    late = set(overlapping)
    return [key for key in order if key not in late] + [key for key in order if key in late]
