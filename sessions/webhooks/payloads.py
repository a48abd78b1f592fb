"""What a webhook sends: the delivery's id, and the body of an event (the feed's item, or
a line for Slack) or of a ping. Its headers and signature are `domain.webhooks`'."""

import json
from datetime import datetime

from sessions.domain import jsonl, reclaims, vocabulary
from sessions.domain.records import EventRecord
from sessions.domain.webhooks import PING
from sessions.models import Subscription
from sessions.readmodels import session_views, shapes


def delivery_id(subscription: Subscription, position: int) -> str:
    """Stable across retries and restarts, so a receiver can drop a repeat."""
    return f"{subscription.pk}-{position}"


_SLACK_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

# What each event says its actor did to the session or plan (its title in bold).
_SLACK_DEEDS = {
    vocabulary.START: "started {title}",
    vocabulary.BLOCK: "blocked {title}",
    vocabulary.UNBLOCK: "unblocked {title}",
    vocabulary.REVIEW: "sent {title} to review",
    vocabulary.CLOSE: "closed {title}",
    vocabulary.PROGRESS: "reported progress on {title}",
    vocabulary.MESSAGE: "wrote to whoever works on {title}",
    vocabulary.PLAN_CREATE: "made the plan {title}",
    vocabulary.PLAN_AMEND: "amended the plan {title}",
}


def slack_text(event: EventRecord, title: str | None, owner: str | None = None) -> str:
    """One line for a Slack channel, e.g. "agent-7 blocked *Fix flaky login test*: needs
    the CI secrets rotated", or for a reclaim's close of `owner`'s session "agent-9 took
    *Migrate the schema* from agent-7 (silent since 14:02)" (UTC). Slack's three control
    characters are escaped."""

    def plain(text: str) -> str:
        return text.translate(_SLACK_ESCAPES)

    named = f"*{plain(title or event.session)}*"
    reclaim = reclaims.reclaimed(event)
    if reclaim is not None and owner is not None:
        since = jsonl.parse_timestamp(reclaim[0]).strftime("%H:%M")
        return f"{plain(event.actor)} took {named} from {plain(owner)} (silent since {since})"
    line = f"{plain(event.actor)} {_SLACK_DEEDS[event.type].format(title=named)}"
    if event.outcome:
        line += f" ({event.outcome})"
    said = event.reason or event.note
    return f"{line}: {plain(said)}" if said else line


def event_body(subscription: Subscription, position: int, event: EventRecord) -> bytes:
    """The POSTed body: the feed's item, or for Slack a message naming the title."""
    if subscription.payload == Subscription.SLACK:
        first = session_views.first_event(event.session)
        title = event.title or (first.title if first else None)
        document = {"text": slack_text(event, title, first.actor if first else None)}
    else:
        document = shapes.feed_item(position, event)
    return json.dumps(document, ensure_ascii=False).encode()


def ping_body(subscription: Subscription, now: datetime) -> bytes:
    if subscription.payload == Subscription.SLACK:
        document = {"text": f"Control Tower: webhook {subscription.pk} is set up for this channel."}
    else:
        document = {"type": PING, "subscription": subscription.pk, "sent_at": now.isoformat()}
    return json.dumps(document).encode()
