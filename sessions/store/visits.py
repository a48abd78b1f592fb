"""Since you last looked: per person, the moment the board marks changes from.

A *visit* is a run of board loads with no gap longer than `VISIT_GAP_MINUTES`. The
board marks a card when its session has an event after the end of the viewer's previous
visit, so reloading during a visit keeps the marks, and the first visit ever marks
nothing (everything would be new). The board's polls read the moment and never move it:
only loading the page is looking.
"""

from datetime import datetime, timedelta

from django.db import transaction

from sessions import config
from sessions.models import BoardVisit, Person

# A load this soon after the recorded one writes nothing: a write is a commit, which on
# PostgreSQL waits for the disk (a fifth of a board load's time there), and a visit's
# end is then known to within this, far inside the gap that ends a visit.
SEEN_RESOLUTION = timedelta(minutes=1)


def look(user: Person, now: datetime) -> datetime | None:
    """Record that `user` loads the board at `now`; the moment to mark changes from."""
    seen = BoardVisit.objects.filter(user=user).values_list("seen_at", "marks_since").first()
    if seen is not None and timedelta(0) <= now - seen[0] < SEEN_RESOLUTION:
        return seen[1]
    with transaction.atomic():
        visit = BoardVisit.objects.select_for_update().filter(user=user).first()
        if visit is None:
            BoardVisit.objects.get_or_create(user=user, defaults={"seen_at": now})
            return None
        if now - visit.seen_at > timedelta(minutes=config.current().visit_gap_minutes):
            visit.marks_since = visit.seen_at
        visit.seen_at = max(visit.seen_at, now)
        visit.save(update_fields=["seen_at", "marks_since"])
        return visit.marks_since


def marks_since(user: Person) -> datetime | None:
    """The moment the viewer's marks count from, without recording a look (polls)."""
    return BoardVisit.objects.filter(user=user).values_list("marks_since", flat=True).first()
