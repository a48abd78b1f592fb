"""The event table, which only ever grows; the API tokens that let agents append to it;
and operational state kept beside it: board visits, webhook subscriptions and deliveries."""

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models

from sessions.domain import vocabulary

# The user model: Django's own (AUTH_USER_MODEL is not swapped), named once, so that every
# layer that takes a user says which, and the type checker knows its permissions.
Person = User


class ImmutableEventError(Exception):
    """Raised on any attempt to change or remove a stored event."""

    def __init__(self, action):
        super().__init__(f"Events are immutable: {action} is not allowed.")


class EventQuerySet(models.QuerySet):
    """Reading and inserting only; every bulk write path raises."""

    def update(self, **kwargs):
        raise ImmutableEventError("update()")

    def delete(self):
        raise ImmutableEventError("delete()")

    def bulk_update(self, objs, fields, batch_size=None):
        raise ImmutableEventError("bulk_update()")


# The transitions whose note, when set, is the session's next action.
_NOTED_TRANSITIONS = [t for t in vocabulary.NOTE_BEARING if t != vocabulary.BLOCK]


# Partial indexes the store names on SQLite, which would not take them by itself
# (`store.database.by_index`).
PROGRESS_NOTES_INDEX = "tower_event_progress_notes"
TOUCHED_INDEX = "tower_event_touched"


class Event(models.Model):
    # The stream's id: a session's, or a plan's (they share one namespace).
    session = models.CharField(max_length=vocabulary.SESSION_ID_MAX)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=16, choices=[(t, t) for t in vocabulary.ALL_EVENT_TYPES])
    timestamp = models.DateTimeField()
    # The actor's username as text, never a foreign key: deleting or renaming a user
    # must leave history as it was, and imported actors need no user row.
    actor = models.CharField(max_length=vocabulary.ACTOR_MAX)
    # v5: the agent program that appended it for its actor, with its version; absent,
    # the actor acted in person.
    agent = models.CharField(max_length=vocabulary.AGENT_MAX, null=True, blank=True)
    title = models.CharField(max_length=vocabulary.MAX_LENGTH["title"], null=True, blank=True)
    reason = models.TextField(max_length=vocabulary.MAX_LENGTH["reason"], null=True, blank=True)
    note = models.TextField(max_length=vocabulary.MAX_LENGTH["note"], null=True, blank=True)
    # A session's start names the plan and node it works on; its close, its outcome.
    plan = models.CharField(max_length=vocabulary.SESSION_ID_MAX, null=True, blank=True)
    node = models.CharField(max_length=vocabulary.SESSION_ID_MAX, null=True, blank=True)
    outcome = models.CharField(
        max_length=16, choices=[(o, o) for o in vocabulary.OUTCOMES], null=True, blank=True
    )
    # A plan event's liveness settings: its lease (minutes) and its cap on attempts.
    lease = models.PositiveIntegerField(null=True, blank=True)
    max_attempts = models.PositiveIntegerField(null=True, blank=True)
    # A plan event's: what makes a node done, its session's close or its PR's merge.
    done_when = models.CharField(max_length=8, null=True, blank=True)
    # A plan event's budget in US dollars (0: an amend's removal of the plan's budget).
    budget_usd = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True)
    # A session_work's report of where the work lands. Its `commit` and `check` are SQL
    # keywords (and `check` a model method): their fields and columns are named apart
    # (`store.database.COLUMN_OF`).
    repo = models.CharField(max_length=vocabulary.REPO_MAX, null=True, blank=True)
    branch = models.CharField(max_length=vocabulary.BRANCH_MAX, null=True, blank=True)
    commit_sha = models.CharField(max_length=40, null=True, blank=True)
    pr = models.PositiveIntegerField(null=True, blank=True)
    pr_url = models.CharField(max_length=vocabulary.PR_URL_MAX, null=True, blank=True)
    pr_state = models.CharField(max_length=8, null=True, blank=True)
    check_name = models.CharField(max_length=vocabulary.CHECK_MAX, null=True, blank=True)
    check_state = models.CharField(max_length=8, null=True, blank=True)
    # A session_usage's token totals so far for one model (`model` is named apart: a
    # model field of that name would read as Django's own).
    usage_model = models.CharField(max_length=vocabulary.MODEL_MAX, null=True, blank=True)
    input_tokens = models.BigIntegerField(null=True, blank=True)
    output_tokens = models.BigIntegerField(null=True, blank=True)
    cache_read_tokens = models.BigIntegerField(null=True, blank=True)
    cache_write_tokens = models.BigIntegerField(null=True, blank=True)
    # A plan event's graph changes, each a JSON list as the event carries it (the store
    # writes and reads the text; nothing queries inside it).
    nodes = models.TextField(null=True, blank=True)
    needs = models.TextField(null=True, blank=True)
    drop_needs = models.TextField(null=True, blank=True)
    retire = models.TextField(null=True, blank=True)
    # An amend's per-node maps (budgets, path patterns, briefs); a heartbeat's touched
    # `paths`.
    budgets = models.TextField(null=True, blank=True)
    paths = models.TextField(null=True, blank=True)
    briefs = models.TextField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="tower_event_session_seq"),
            models.UniqueConstraint(
                # A key is its actor's: keys of different actors never meet.
                fields=["session", "actor", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="tower_event_idempotency_key",
            ),
        ]
        indexes = [
            # The board finds open sessions as "started and not closed" from these two
            # small partial indexes, without reading any closed session's events. The
            # starts' holds their time, for the sessions started by a moment (an as-of
            # board, the metrics' window): 100,000 fewer table reads for the metrics.
            models.Index(
                fields=["session", "timestamp"],
                condition=models.Q(type=vocabulary.START),
                name="tower_event_starts",
            ),
            models.Index(
                fields=["session", "timestamp"],
                condition=models.Q(type=vocabulary.CLOSE),
                name="tower_event_closes",
            ),
            # The board's sessions closed lately, by close time: without it, reading
            # them scanned every close (7 ms at 100,000 closed, on SQLite).
            models.Index(
                fields=["timestamp", "session"],
                condition=models.Q(type=vocabulary.CLOSE),
                name="tower_event_close_times",
            ),
            models.Index(fields=["actor"], name="tower_event_actor"),
            # The plans that name a repository (reservations): a few rows per plan,
            # whatever else the table holds.
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(type__in=vocabulary.PLAN_EVENT_TYPES, repo__isnull=False),
                name="tower_event_plan_repos",
            ),
            # A session's reports of the paths it wrote, past any number of heartbeats
            # that name none (the view's `touched`).
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(type=vocabulary.PROGRESS, paths__isnull=False),
                name=TOUCHED_INDEX,
            ),
            # A retried start that named no id is found by its actor's key, whatever id
            # was made for it (`store.start_by_key`).
            models.Index(
                fields=["actor", "idempotency_key"],
                condition=models.Q(seq=1, idempotency_key__isnull=False),
                name="tower_event_keyed_starts",
            ),
            # A session's view reads a few events by type and by note, whatever the
            # stream's length (`store.read_view_events`): each is one probe of these.
            models.Index(fields=["session", "type", "seq"], name="tower_event_session_type"),
            # The latest note that is a next action (a block's is its reason: the type's
            # own probe above), past any number of progress notes and messages.
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(note__isnull=False, type__in=_NOTED_TRANSITIONS),
                name="tower_event_next_actions",
            ),
            # A session's last transition (its status), past any number of heartbeats
            # and messages: the board's, the list's and a view's one probe each.
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(type__in=vocabulary.TRANSITIONS),
                name="tower_event_transitions",
            ),
            # The latest progress note, past any number of bare heartbeats.
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(type=vocabulary.PROGRESS, note__isnull=False),
                name=PROGRESS_NOTES_INDEX,
            ),
            # A plan's node sessions: the starts that name it, and each one's close. Both
            # cover what the node states read (`store.node_sessions_of`), so the read
            # never visits the table: 5,000 node sessions in 18 ms on SQLite whether they
            # hold 6 events or 60, against 26 and 47 ms (bench/RESULTS.md). The starts'
            # index includes their id (SQLite's indexes hold it anyway) for a claim's
            # count of the plan's starts up to a position, which on PostgreSQL read the
            # table once per start (9 ms at 5,000).
            models.Index(
                fields=["plan", "node", "timestamp", "session", "type"],
                include=["id"],
                condition=models.Q(type=vocabulary.START, plan__isnull=False),
                name="tower_event_plan_starts",
            ),
            models.Index(
                fields=["session", "type", "outcome", "timestamp"],
                condition=models.Q(type=vocabulary.CLOSE),
                name="tower_event_outcomes",
            ),
            # Plans, found by their first event.
            models.Index(
                fields=["session"],
                condition=models.Q(type=vocabulary.PLAN_CREATE),
                name="tower_event_plan_creates",
            ),
            # Where the work lands: the forge's deliveries find the sessions on a branch or
            # at a commit, and a view the check runs at its head commit, by these.
            models.Index(
                fields=["branch", "session"],
                condition=models.Q(type=vocabulary.WORK, branch__isnull=False),
                name="tower_event_work_branches",
            ),
            models.Index(
                fields=["commit_sha", "session", "seq"],
                condition=models.Q(type=vocabulary.WORK, commit_sha__isnull=False),
                name="tower_event_work_commits",
            ),
            # Newest activity first (the API's list walks it backwards) and the admin.
            models.Index(fields=["timestamp", "id"], name="tower_event_timestamp_id"),
        ]
        permissions = [("act_on_any_session", "Can act on any session")]

    def __str__(self):
        return f"{self.session}#{self.seq} {self.type}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableEventError("saving an existing event")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableEventError("delete()")


class ApiToken(models.Model):
    """A bearer token acting as its user. Only a hash and a short prefix are stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # What it may do: "read" (GET only, over the API and MCP alike) or "write" (all).
    scope = models.CharField(
        max_length=5, choices=[("read", "read"), ("write", "read and write")], default="write"
    )
    expires_at = models.DateTimeField(null=True, blank=True)  # None: it never expires

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…) of {self.user}"


class BoardVisit(models.Model):
    """When a person last looked at the board: a viewer's preference, not a fact about
    sessions, so it lives here, outside the event table, and is overwritten freely."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    # The last time the board was loaded for them.
    seen_at = models.DateTimeField()
    # Cards with events after this moment are marked: the end of their previous visit.
    marks_since = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.user} saw the board at {self.seen_at:%Y-%m-%d %H:%M}"


class Subscription(models.Model):
    """A webhook: a URL the delivery worker POSTs the feed's matching events to, in order.
    Its cursor is operational state (the position delivered up to, moved by the worker),
    never a fact about sessions; nothing about a session is derived from it."""

    EVENT, SLACK = "event", "slack"
    PAYLOADS = [
        (EVENT, "The event as JSON, as the feed gives it"),
        (SLACK, "A Slack message: one text line"),
    ]

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions"
    )
    url = models.URLField("URL", max_length=2000)
    # The key of each body's HMAC-SHA256; the receiver holds it too, so it is kept whole.
    secret = models.CharField(max_length=64)
    payload = models.CharField(max_length=8, choices=PAYLOADS, default=EVENT)
    # Filters, as the feed's: blank means not narrowed.
    event_type = models.CharField(
        "event type",
        max_length=32,
        blank=True,
        choices=[(t, t) for t in vocabulary.ALL_EVENT_TYPES],
    )
    stream = models.CharField(max_length=vocabulary.SESSION_ID_MAX, blank=True)
    plan = models.CharField(max_length=vocabulary.SESSION_ID_MAX, blank=True)
    # Every event at or below this position was delivered or did not match.
    cursor = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"webhook {self.pk} to {self.url} of {self.owner}"

    @property
    def filters(self) -> dict[str, str | None]:
        """The feed's narrowing, as `reading.feed` takes it."""
        return {
            "event_type": self.event_type or None,
            "stream": self.stream or None,
            "plan": self.plan or None,
        }


class Delivery(models.Model):
    """One event's (or one ping's) delivery to a subscription: how many tries, what the
    last one got, and when it was answered with a 2xx."""

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    position = models.BigIntegerField(null=True, blank=True)  # None: a ping
    delivery_id = models.CharField(max_length=80)
    attempts = models.PositiveIntegerField(default=0)
    # The last try's HTTP status, or None if it got no answer.
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    last_tried_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-last_tried_at", "-pk"]
        constraints = [
            # A restarted worker redelivers onto the same row (ping rows have no position).
            models.UniqueConstraint(
                fields=["subscription", "position"], name="one_delivery_per_event"
            )
        ]
        indexes = [models.Index(fields=["subscription", "-last_tried_at"])]

    def __str__(self):
        return f"delivery {self.delivery_id}"
