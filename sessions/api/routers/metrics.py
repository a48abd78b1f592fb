"""/api/metrics: the flow metrics over a window."""

from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from ninja import Query, Router

from sessions.api import answers, requests
from sessions.api.common import (
    READ_ERRORS,
)
from sessions.readmodels import flow as flow_model
from sessions.readmodels import shapes
from sessions.rules import window as metrics_window

router = Router(tags=["metrics"])


@router.get(
    "/metrics",
    response={200: answers.Metrics, **READ_ERRORS},
    summary="Flow metrics over a window: throughput, cycle, blocked and review times, flow",
)
def metrics_view(request: HttpRequest, window: Query[requests.MetricsWindow]):
    since, until = metrics_window.window(window.since, window.until, timezone.now())
    return JsonResponse(shapes.metrics_json(flow_model.window_metrics(since, until)))
