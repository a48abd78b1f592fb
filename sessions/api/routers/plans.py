"""/api/plans: create, list, read and amend build plans, claim their nodes, and their
logs."""

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router

from sessions.api import answers, requests
from sessions.api.common import (
    KEY_HEADER,
    LOG_ANSWER,
    ONE_ERRORS,
    READ_ERRORS,
    WRITE_ERRORS,
    appended,
    created_status,
    event_appended,
    log_download,
    next_page,
    one_page,
    plan_of,
    request_key,
    view_of_appended,
)
from sessions.domain import vocabulary
from sessions.readmodels import plan_views, shapes
from sessions.rules.claims import claim_next
from sessions.rules.refusals import UnknownPlan

router = Router(tags=["plans"])


@router.post(
    "/plans",
    response={201: answers.Plan, 200: answers.Plan, **WRITE_ERRORS},
    summary="Create a build plan",
    description="A cycle, a repeated key or a need of no node is refused (400), naming it.",
)
def create_plan(
    request: HttpRequest,
    body: requests.CreatePlan,
    idempotency_key: requests.IdempotencyKey | None = KEY_HEADER,
):
    fields = body.model_dump(exclude={"id"})
    result, status = appended(request, body.id, vocabulary.PLAN_CREATE, fields, idempotency_key)
    return JsonResponse(plan_of(result.event.session), status=status)


@router.get(
    "/plans",
    response={200: answers.PlanList, **READ_ERRORS},
    summary="List plans, newest first: each one's progress (its nodes are in its view)",
)
def list_plans(request: HttpRequest, page: Query[requests.PlanPage]):
    ids, has_next = one_page(plan_views.plan_ids(page.at), page.page, page.page_size)
    items = [answers.plan_summary_json(plan) for plan in plan_views.plan_summaries(ids, page.at)]
    next_url = next_page(request, "page", page.page + 1) if has_next else None
    return JsonResponse({"items": items, "next": next_url})


@router.get(
    "/plans/{plan_id}",
    response={200: answers.Plan, **ONE_ERRORS},
    summary="A plan's view: node states, ready work, progress, critical path",
)
def plan_detail(
    request: HttpRequest, plan_id: requests.SessionId, options: Query[requests.PlanOptions]
):
    return JsonResponse(plan_of(plan_id, options.at))


@router.post(
    "/plans/{plan_id}/events",
    response={201: answers.PlanAppended, 200: answers.PlanAppended, **WRITE_ERRORS},
    summary="Amend a plan",
    description="Only the plan's owner (or someone allowed to act on any session) may. "
    "A cycle, an unknown key or a retire that strands a node is refused (400); retiring a "
    "node with a live session is a conflict (409).",
)
def amend_plan(
    request: HttpRequest,
    plan_id: requests.SessionId,
    body: requests.AmendPlan,
    idempotency_key: requests.IdempotencyKey | None = KEY_HEADER,
):
    result, status = event_appended(request, plan_id, body, idempotency_key)
    answer = {"event": shapes.event_json(result.event), "plan": plan_of(plan_id)}
    return JsonResponse(answer, status=status)


@router.post(
    "/plans/{plan_id}/claim",
    response={201: answers.Claimed, 200: answers.Claimed, **WRITE_ERRORS},
    summary="Claim the next ready node, or reclaim a lapsed one: start a session on it",
    description="Agents claiming at once each get a different node; a lapsed node's silent "
    "session is closed (outcome lapsed) in the same transaction. The answer carries the "
    "node's `last_attempt`, the previous worker's handoff. 409 `nothing_ready` when no node "
    "is ready or reclaimable.",
)
def claim(
    request: HttpRequest,
    plan_id: requests.SessionId,
    body: requests.Claim,
    idempotency_key: requests.IdempotencyKey | None = KEY_HEADER,
):
    key, given = request_key(request, idempotency_key)
    result = claim_next(plan_id, user=request.auth, idempotency_key=key, agent=body.agent)
    answer = view_of_appended(result)
    last, brief = result.last_attempt, result.brief
    if not result.created:  # a repeated key's answer: as the node's history says
        last = plan_views.last_attempt(plan_id, result.event.node, result.event.session)
        brief = plan_views.node_brief(plan_id, result.event.node)
    answer["last_attempt"] = answers.attempt_json(last)
    answer["brief"] = brief
    return JsonResponse(answer, status=created_status(result, given))


@router.get(
    "/plans/{plan_id}/events.jsonl",
    response={200: None, **ONE_ERRORS},
    summary="The plan's log as JSONL: one event per line, oldest first",
    openapi_extra={"responses": {200: LOG_ANSWER}},
)
def plan_log(request: HttpRequest, plan_id: requests.SessionId):
    return log_download(plan_id, plan_views.plan_events(plan_id), UnknownPlan)
