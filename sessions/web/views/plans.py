"""The plans' list and a plan's page: create, amend, start a node, release a lapsed one."""

from decimal import Decimal
from typing import NamedTuple

from django.http import Http404
from django.shortcuts import redirect, render

from sessions import config
from sessions.domain import budgets, plans, spend, vocabulary
from sessions.readmodels import plan_views, session_views
from sessions.rules.append import new_session_id
from sessions.rules.permissions import may_act, may_release
from sessions.rules.refusals import (
    Conflict,
    InvalidEvent,
)
from sessions.web import drawing
from sessions.web.forms import (
    AmendForm,
    BudgetForm,
    PlanForm,
)
from sessions.web.moments import as_of_moment
from sessions.web.pages import (
    PLAN,
    acted,
    action,
    live_page,
    page,
    page_version,
    post_event,
    post_form,
)


@page("plans/", "plans")
def plan_list(request):
    return live_page(request, lambda: plan_list_context(request), "sessions/plans.html")


def plan_list_context(request, form=None):
    summaries = plan_views.plan_summaries()
    return {
        "plans": [(plan, progress_percent(plan)) for plan in summaries],
        "form": form or PlanForm(),
        "version": page_version(),
        "poll_seconds": config.current().poll_seconds,
        "states": plans.NODE_STATES,
    }


def progress_percent(plan):
    return round(100 * plan.done / plan.total) if plan.total else 0


@action("plans/new", "plan_create")
def plan_create(request):
    form = PlanForm(request.POST)
    if form.is_valid():
        plan_id = form.cleaned_data["id"] or request.__dict__.setdefault(
            "_tower_plan", new_session_id()
        )
        posted = post_event(
            request, plan_id, vocabulary.PLAN_CREATE, form.event_fields(), form=form
        )
        if posted.succeeded:
            return redirect("plan", plan_id)
        if not isinstance(posted.refusal, InvalidEvent):
            form.add_error(
                "id" if isinstance(posted.refusal, Conflict) else None, posted.refusal.detail
            )
    return render(request, "sessions/plans.html", plan_list_context(request, form), status=400)


class BudgetLine(NamedTuple):
    """One bar of the plan page's spend: what a node (or the plan) spent against its
    budget, red when spent."""

    owner: str  # a node's key, or `BudgetForm.PLAN`
    title: str
    spent: Decimal
    limit: Decimal | None

    @property
    def over(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    @property
    def said(self) -> str:
        spent = spend.dollars(self.spent)
        return f"{spent} of {spend.dollars(self.limit)}" if self.limit else f"{spent}, no budget"


def budget_lines(view: plans.PlanView) -> list[BudgetLine]:
    """The plan's line, then each live node's (retired ones too when they spent)."""
    plan_limit = None if view.budget_usd is None else vocabulary.dollars(view.budget_usd)
    lines = [BudgetLine(BudgetForm.PLAN, "The plan", budgets.spent_of(view.usage), plan_limit)]
    for node in view.nodes:
        if node.state == plans.RETIRED and node.usage is None:
            continue
        limit = None if node.budget_usd is None else vocabulary.dollars(node.budget_usd)
        lines.append(BudgetLine(node.key, node.title, budgets.spent_of(node.usage), limit))
    return lines


def budget_form(view: plans.PlanView, data=None) -> BudgetForm:
    owners = [
        (
            line.owner,
            f"{line.title}{'' if line.owner == BudgetForm.PLAN else f' ({line.owner})'}"
            f": spent {line.said}",
        )
        for line in budget_lines(view)
        if line.owner == BudgetForm.PLAN or view.node(line.owner).state != plans.RETIRED
    ]
    return BudgetForm(data, owners=owners, initial={"expected_seq": view.seq})


def plan_context(request, plan_id, amend_form=None, message=None, budget=None):
    at = as_of_moment(request) if request.method == "GET" else None
    view = plan_views.plan_view(plan_id, at)
    if view is None:
        raise Http404(f"There is no plan {plan_id!r}" + (" yet at that moment." if at else "."))
    running = [node.session for node in view.nodes if node.session]
    sessions = session_views.session_views(running, at=at)
    return {
        "plan": view,
        "at": at,
        "percent": progress_percent(view),
        "drawing": drawing.draw(view),
        "sessions": sessions,
        "dispatched": plan_views.dispatches(running),
        "ready": [view.node(key) for key in view.ready],
        "retired": [node for node in view.nodes if node.state == plans.RETIRED],
        "may_amend": at is None and may_act(request.user, view.owner),
        "may_release": at is None and may_release(request.user, view.id),
        "reclaimable": set(view.claimable) & set(view.lapsed) if at is None else set(),
        # The handoffs worth reading: of the nodes not done whose last attempt ended.
        "tried": [
            node
            for node in view.nodes
            if node.last_attempt and node.state not in (vocabulary.DONE, plans.RETIRED)
        ],
        "spent": [node for node in view.nodes if node.usage is not None],
        "budget_lines": budget_lines(view),
        "with_paths": [n for n in view.nodes if n.paths and n.state != plans.RETIRED],
        "with_briefs": [n for n in view.nodes if n.brief and n.state != plans.RETIRED],
        "budget_form": budget or budget_form(view),
        "amend_form": amend_form or AmendForm(initial={"expected_seq": view.seq}),
        "notice": message,
        "version": page_version(),
        "poll_seconds": config.current().poll_seconds,
        "states": plans.NODE_STATES,
    }


@page(f"plans/{PLAN}/", "plan", as_of=True)
def plan_page(request, plan_id):
    return live_page(
        request,
        lambda: plan_context(request, plan_id),
        "sessions/plan.html",
        "sessions/_plan_main.html",
    )


def plan_answer(request, plan_id, status, amend_form=None, message=None, budget=None):
    """The plan page after a start or an amend."""
    context = plan_context(request, plan_id, amend_form, message, budget)
    return acted(request, context, "sessions/_plan_main.html", "sessions/plan.html", status)


def said(refusal, undone: str) -> str:
    """What the plan page says of a refusal: a conflict as what was not done (`undone`:
    "Not started") and why; any other refusal by its own sentence."""
    return f"{undone}: {refusal.detail}" if isinstance(refusal, Conflict) else refusal.detail


@action(f"plans/{PLAN}/start/<str:node>", "plan_start")
def plan_start(request, plan_id, node):
    """A person starts a node: a session of theirs on it, or the page saying why not."""
    session_id = request.__dict__.setdefault("_tower_session", new_session_id())
    fields = {"plan": plan_id, "node": node}
    posted = post_event(request, session_id, vocabulary.START, fields)
    if not posted.succeeded:
        message = said(posted.refusal, "Not started")
        return plan_answer(request, plan_id, posted.status, message=message)
    if request.htmx:
        return plan_answer(request, plan_id, 200, message=f"Started {node!r} as {session_id}.")
    return redirect("session", session_id)


@action(f"plans/{PLAN}/release/<str:node>", "plan_release")
def plan_release(request, plan_id, node):
    """The plan's owner or a lead hands a lapsed node back without taking it: its silent
    session is closed with outcome lapsed, and the node is ready (or waiting) again."""
    # Whether it lapsed is the rule's to say (`append_event` refuses a live session).
    session_id = plan_views.unclosed_session(plan_id, node)
    if session_id is None:
        return plan_answer(request, plan_id, 409, message=f"Not released: {node!r} is not lapsed.")
    fields = {"outcome": vocabulary.LAPSED, "note": "released for another worker"}
    posted = post_event(request, session_id, vocabulary.CLOSE, fields)
    refusal = posted.refusal
    if isinstance(refusal, InvalidEvent | Conflict):
        # A session that is not lapsed (any more): the node moved on, as a conflict says.
        return plan_answer(request, plan_id, 409, message=f"Not released: {refusal.detail}")
    if refusal is not None:
        return plan_answer(request, plan_id, posted.status, message=refusal.detail)
    if request.htmx:
        return plan_answer(request, plan_id, 200, message=f"Released {node!r}.")
    return redirect("plan", plan_id)


@action(f"plans/{PLAN}/amend", "plan_amend")
def plan_amend(request, plan_id):
    form = AmendForm(request.POST)
    if not form.is_valid():
        return plan_answer(request, plan_id, 400, form)
    posted = post_form(request, plan_id, vocabulary.PLAN_AMEND, form)
    if not posted.succeeded:
        refusal = posted.refusal
        message = None if isinstance(refusal, InvalidEvent) else said(refusal, "Not amended")
        return plan_answer(request, plan_id, posted.status, form, message)
    if not request.htmx:
        return redirect("plan", plan_id)
    return plan_answer(request, plan_id, 200, message="Plan amended.")


@action(f"plans/{PLAN}/budget", "plan_budget")
def plan_budget(request, plan_id):
    """A person sets the plan's budget or a node's (an amend), seeing what each spent."""
    view = plan_views.plan_view(plan_id)
    if view is None:
        raise Http404(f"There is no plan {plan_id!r}.")
    form = budget_form(view, request.POST)
    if not form.is_valid():
        return plan_answer(request, plan_id, 400, budget=form)
    posted = post_form(request, plan_id, vocabulary.PLAN_AMEND, form)
    if not posted.succeeded:
        refusal = posted.refusal
        message = None if isinstance(refusal, InvalidEvent) else said(refusal, "Not set")
        return plan_answer(request, plan_id, posted.status, message=message, budget=form)
    if not request.htmx:
        return redirect("plan", plan_id)
    return plan_answer(request, plan_id, 200, message="Budget set.")
