"""The flow metrics of a window, folded in SQL (`store.flow_folds`), and its spend."""

from datetime import UTC, date, datetime

from sessions import store
from sessions.domain import agents
from sessions.domain import metrics as flow_metrics
from sessions.readmodels import spend as spend_model


def metrics(since: datetime, until: datetime) -> dict:
    """The flow metrics of `[since, until)`, folded in SQL over the sessions open at some
    moment of the window or closed in it (`metrics.metrics` over their streams is the
    reference it must equal), and a count of those closed before it."""
    closed, changes = store.flow_folds(since, until)
    return flow_metrics.metrics_from_folds(
        since, until, closed, changes, store.closed_before(since)
    )


def window_metrics(since: datetime, until: datetime) -> dict:
    """What the metrics page and `/api/metrics` show of `[since, until)`: its flow
    metrics, the sessions closed per agent, and what was spent (`spend.spend_in`)."""
    return {
        **metrics(since, until),
        "throughput_by_agent": throughput_by_agent(since, until),
        "spend": spend_model.spend_in(since, until),
    }


def throughput_by_agent(since: datetime, until: datetime) -> dict[str, dict[str, int]]:
    """The sessions closed in `[since, until)` per program of the agent that started them
    (`agents.program`), by outcome, sorted."""
    found: dict[str, dict[str, int]] = {}
    for (agent, outcome), count in store.closes_by_agent(since, until).items():
        counts = found.setdefault(agents.program(agent), {})
        counts[outcome] = counts.get(outcome, 0) + count
    return {program: dict(sorted(counts.items())) for program, counts in sorted(found.items())}


def first_day() -> date | None:
    """The first UTC day with an event, or None for an empty tower."""
    moment = store.first_moment()
    return moment.astimezone(UTC).date() if moment is not None else None
