"""A session as the viewer sees it on the board and its page: its view and the actions
open to them."""

from dataclasses import dataclass, field

from sessions.domain import projections, vocabulary
from sessions.rules.permissions import may_act, may_message
from sessions.web.forms import (
    ACTIONS,
)


@dataclass
class Card:
    """A session as the viewer sees it: its view and the actions open to them.

    Each action comes with the form that just failed for it, if any; the others are
    written as plain HTML (building a Form per card made a large board slow).
    """

    view: projections.SessionView
    actions: list = field(default_factory=list)  # (Action, failed ActionForm or None)
    message: str | None = None
    changed: bool = False  # events since the viewer last looked (`visits`)

    @property
    def status_label(self):
        return vocabulary.STATUS_LABELS.get(self.view.status, "")


def make_card(view, user, failed_form=None, message=None, marks_since=None):
    """`user` None: a read-only card (the board as of a past moment). A session with
    events after `marks_since` is marked as changed."""
    actions = []
    acting = user is not None and may_act(user, view.owner)
    for action in ACTIONS.values():
        if vocabulary.transition_error(action.event_type, view.status):
            continue
        allowed = acting or (
            action.event_type == vocabulary.MESSAGE
            and user is not None
            and view.plan is not None
            and may_message(user, view.owner, view.plan)
        )
        if allowed:
            failed = failed_form if failed_form and failed_form.action == action else None
            actions.append((action, failed))
    changed = marks_since is not None and view.last_event_at > marks_since
    return Card(view, actions, message, changed)
