"""The forge's deliveries appended (docs/rules.md, "Where the work lands"): each one a
`session_work` on every session it is about, as the forge's own user, under the
delivery's id as the idempotency key, so a redelivery appends nothing."""

from django.contrib.auth import get_user_model

from sessions import config
from sessions.domain import vocabulary
from sessions.domain.github import Delivery
from sessions.readmodels import work as work_model
from sessions.rules.append import append_event
from sessions.rules.refusals import Refused
from sessions.store import users

# A delivery reports on at most this many sessions, the latest-opened.
MOST_SESSIONS = 20


def report(delivery: Delivery, key: str) -> tuple[int, list[str]]:
    """Append what `delivery` says to the sessions it is about: how many it matched, and
    those it appended to (a redelivery's key repeats, and appends nothing)."""
    settings = config.current()
    forge = users.service_user(get_user_model(), settings.github_actor)
    matched = work_model.sessions_reached(delivery, settings.shared_branches, MOST_SESSIONS)
    appended = []
    for session_id in matched:
        try:
            result = append_event(
                session_id, vocabulary.WORK, dict(delivery.fields), user=forge, idempotency_key=key
            )
        except Refused:
            continue  # e.g. a stream at its cap: the others still hear of it
        if result.created:
            appended.append(session_id)
    return len(matched), appended
