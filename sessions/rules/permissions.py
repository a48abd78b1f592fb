"""Who may write what: the owner of a stream or a lead (the act-on-any-session
permission); the plan's owner also to a session on its node (a message, a release).
Reads and writes ask the same questions here."""

from datetime import datetime

from django.contrib.auth.models import AnonymousUser

from sessions import config, store
from sessions.domain import projections, vocabulary
from sessions.domain.records import EventRecord
from sessions.models import Person
from sessions.readmodels import plan_graphs
from sessions.rules.refusals import Forbidden, InvalidEvent

ACT_ON_ANY_SESSION = "tower.act_on_any_session"


# Who asks: a signed-in person or agent, or nobody (refused).
User = Person | AnonymousUser


def may_act(user: User, session_owner: str | None) -> bool:
    """Whether `user` may append to a session owned by `session_owner`."""
    if not user.is_authenticated:
        return False
    return user.get_username() == session_owner or user.has_perm(ACT_ON_ANY_SESSION)


def is_forge(user: User) -> bool:
    """Whether `user` is the forge integration's own (`GITHUB_ACTOR`, which can never
    sign in): it may append `session_work`, and a merge's close, to any session."""
    return (
        user.is_authenticated
        and user.get_username() == config.current().github_actor
        and not user.has_usable_password()
    )


def plan_owner(plan_id: str | None) -> str | None:
    """Who created the plan (its owner), or None."""
    if plan_id is None:
        return None
    ends = store.stream_ends(plan_id)
    return ends[0].actor if ends and ends[0].type == vocabulary.PLAN_CREATE else None


def _owns_plan(user: User, plan_id: str | None) -> bool:
    return (
        user.is_authenticated and plan_id is not None and plan_owner(plan_id) == user.get_username()
    )


def may_message(user: User, session_owner: str | None, plan_id: str | None) -> bool:
    """Whether `user` may write to a session's worker: whoever may append to it, and for
    a session on a plan's node, the plan's owner."""
    return may_act(user, session_owner) or _owns_plan(user, plan_id)


def may_release(user: User, plan_id: str | None) -> bool:
    """Whether `user` may hand a lapsed node of the plan back: its owner or a lead."""
    if not user.is_authenticated or plan_id is None:
        return False
    return user.has_perm(ACT_ON_ANY_SESSION) or _owns_plan(user, plan_id)


def check_permission(
    user: User,
    event_type: str,
    fields: dict,
    first: EventRecord,
    events: list[EventRecord],
    now: datetime,
) -> None:
    """Refuse an append the user may not make to the stream whose first event is
    `first` (`events`: those its view depends on): the owner's or a lead's, but a plan
    owner may also write to a session on the plan's node, and a release (a close with
    outcome lapsed) is the plan owner's or a lead's, on a lapsed session only."""
    owner, kind = first.actor, vocabulary.stream_kind(first.type)
    if event_type == vocabulary.WORK and kind == "session" and is_forge(user):
        return  # the forge reports where any session's work lands
    if event_type == vocabulary.CLOSE and fields.get("outcome") == vocabulary.LAPSED:
        _check_release(user, first, events, now)
        return
    allowed = (
        may_message(user, owner, first.plan)
        if event_type == vocabulary.MESSAGE and kind == "session"
        else may_act(user, owner)
    )
    if not allowed:
        also = (
            ", the plan's owner"
            if event_type == vocabulary.MESSAGE and first.plan is not None
            else ""
        )
        raise Forbidden(
            f"Only the {kind}'s owner ({owner}){also} or someone allowed "
            f"to act on any session may change it."
        )


def _check_release(
    user: User, first: EventRecord, events: list[EventRecord], now: datetime
) -> None:
    """A close with outcome lapsed from a person is a release: the plan's owner or a
    lead handing a lapsed node back. Anything else sending it is refused (400)."""
    if first.type != vocabulary.START or not may_release(user, first.plan):
        raise InvalidEvent(
            {
                "outcome": "lapsed is written only by a reclaim, or by the plan's owner or "
                "a lead releasing a lapsed node"
            }
        )
    if not projections.has_lapsed(events, now, plan_graphs.lease(first.plan)):
        raise InvalidEvent(
            {"outcome": "lapsed may close only a lapsed session (active and silent past its lease)"}
        )
