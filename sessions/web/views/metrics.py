"""The flow metrics page."""

from datetime import UTC, timedelta

from django.shortcuts import render
from django.utils import timezone

from sessions.domain import agents, vocabulary
from sessions.domain import metrics as flow_metrics
from sessions.readmodels import flow as flow_model
from sessions.readmodels import shapes
from sessions.rules import window as metrics_window
from sessions.web import charts
from sessions.web.forms import (
    MetricsWindowForm,
)
from sessions.web.pages import (
    page,
)


@page("metrics/", "metrics")
def metrics_page(request):
    today = timezone.now().astimezone(UTC).date()
    default = metrics_window.default_days(today, flow_model.first_day())
    initial = dict(zip(("since", "until"), default, strict=True))
    form = MetricsWindowForm(request.GET or initial)
    valid = form.is_valid()  # an invalid window is re-shown with its error, over the default
    window = form.cleaned_data if valid else initial
    first, end = metrics_window.whole_days(window["since"], window["until"])
    found = shapes.metrics_json(flow_model.window_metrics(first, end))
    days = list(found["flow"])
    # Each agent program as people call it ("Codex"), a session naming none as such.
    by_agent = {
        agents.program_name(program): usd for program, usd in found["spend"]["by_agent"].items()
    }
    context = {
        "form": form,
        "found": found,
        "first_day": window["since"],
        "last_day": window["until"],
        "days": days,
        "throughput_chart": charts.throughput(days, found["throughput"]),
        "flow_chart": charts.flow(days, found["flow"]),
        "times_chart": charts.times(found),
        "spend_chart": charts.spend_per_day(days, found["spend"]["by_day"]),
        "owners_chart": charts.spend_per_name(found["spend"]["by_owner"]),
        "agents_chart": charts.spend_per_name(by_agent),
        "by_agent": by_agent,
        "closed_by_agent": [
            (agents.program_name(program), counts)
            for program, counts in found["throughput_by_agent"].items()
        ],
        "times": [(title, found[key]) for key, title in charts.TIMES],
        "outcomes": vocabulary.OUTCOMES,
        "flow_statuses": flow_metrics.FLOW_STATUSES,
        "presets": [(n, today - timedelta(days=n - 1), today) for n in (7, 14, 30, 90)],
    }
    return render(request, "sessions/metrics.html", context, status=200 if valid else 400)
