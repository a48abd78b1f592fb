"""Forms of the board and session page. They shape the input; `append_event` judges it."""

import re
from dataclasses import dataclass
from decimal import Decimal

from django import forms
from django.core.validators import URLValidator

from sessions.domain import vocabulary
from sessions.models import ApiToken, Subscription
from sessions.rules import tokens, window

OUTCOME_CHOICES = [(outcome, outcome.capitalize()) for outcome in vocabulary.OUTCOMES]


@dataclass(frozen=True)
class Action:
    slug: str
    event_type: str
    button: str  # the card's summary that unfolds it
    field: str  # "reason" or "note"
    field_label: str | None = None  # default: the field's name
    submit: str = ""  # its form's button: a name of its own, never the summary's

    @property
    def label(self):
        return self.field_label or self.field.capitalize()

    @property
    def required(self):
        return self.field in vocabulary.REQUIRED_FIELDS.get(self.event_type, ())

    @property
    def max_length(self):
        return vocabulary.MAX_LENGTH[self.field]

    @property
    def outcome_choices(self):
        """A close says how the work ended; other actions say nothing of it."""
        return OUTCOME_CHOICES if self.event_type == vocabulary.CLOSE else ()


ACTIONS = {
    action.slug: action
    for action in (
        Action("block", vocabulary.BLOCK, "Block", "reason", submit="Block the session"),
        # The note of an unblock is the person's answer: an agent waiting with
        # `ct wait --until unblocked` receives it.
        Action(
            "unblock",
            vocabulary.UNBLOCK,
            "Unblock",
            "note",
            "Answer (the waiting agent receives it)",
            submit="Unblock the session",
        ),
        Action("review", vocabulary.REVIEW, "Send to review", "note", submit="Send it to review"),
        Action("close", vocabulary.CLOSE, "Close", "note", submit="Close the session"),
        Action(
            "message",
            vocabulary.MESSAGE,
            "Message",
            "note",
            "Message to the worker",
            submit="Send the message",
        ),
    )
}


def text_field(label, name, required, **widget_attrs):
    # strip=False: notes are kept exactly as written; blank optional text means "no note".
    return forms.CharField(
        label=label,
        required=required,
        strip=False,
        max_length=vocabulary.MAX_LENGTH[name],
        widget=forms.Textarea(attrs={"rows": 2, **widget_attrs}),
    )


def blank_to_none(value):
    return value if value and value.strip() else None


class StartForm(forms.Form):
    title = forms.CharField(label="Title", strip=False, max_length=vocabulary.MAX_LENGTH["title"])
    note = text_field("First next action", "note", required=False)

    def event_fields(self):
        return {
            "title": self.cleaned_data["title"],
            "note": blank_to_none(self.cleaned_data["note"]),
        }


class ActionForm(forms.Form):
    """One action on one session: a Reason (block) or a Note, and the seq the viewer saw;
    a close also says how the work ended."""

    expected_seq = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)

    def __init__(self, action, session_id, *args, **kwargs):
        kwargs.setdefault("auto_id", f"id_{session_id}_{action.slug}_%s")
        super().__init__(*args, **kwargs)
        self.action = action
        self.fields[action.field] = text_field(action.label, action.field, action.required)
        if action.event_type == vocabulary.CLOSE:
            self.fields["outcome"] = forms.ChoiceField(
                label="Outcome", choices=OUTCOME_CHOICES, required=False
            )

    @property
    def text(self):
        return self[self.action.field]

    def event_fields(self):
        fields = {self.action.field: blank_to_none(self.cleaned_data[self.action.field])}
        if "outcome" in self.fields:
            fields["outcome"] = self.cleaned_data["outcome"] or None
        return fields


# Plans ------------------------------------------------------------------------------
# A plan's graph changes are typed as lines: a node is `key | title | need, need`; the
# needs of a node are `node: need, need`; keys to retire are separated by commas.


def _keys(text):
    return [key.strip() for key in text.replace("\n", ",").split(",") if key.strip()]


def _lines(text):
    return [
        (number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if line.strip()
    ]


def parse_nodes(text):
    nodes = []
    for number, line in _lines(text):
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise forms.ValidationError(
                f"Line {number}: write a node as “key | title” or “key | title | need, need”."
            )
        needs = _keys(parts[2]) if len(parts) == 3 else []
        nodes.append({"key": parts[0], "title": parts[1], **({"needs": needs} if needs else {})})
    return nodes or None


def parse_needs(text):
    edges = []
    for number, line in _lines(text):
        node, colon, needs = line.partition(":")
        if not colon or not node.strip() or not _keys(needs):
            raise forms.ValidationError(f"Line {number}: write the needs as “node: need, need”.")
        edges.extend({"node": node.strip(), "needs": need} for need in _keys(needs))
    return edges or None


def parse_paths(text):
    """“node: pattern, pattern” lines as an amend's `paths`; “node:” alone clears them."""
    found = {}
    for number, line in _lines(text):
        node, colon, patterns = line.partition(":")
        if not colon or not node.strip():
            raise forms.ValidationError(f"Line {number}: write “node: pattern, pattern”.")
        found[node.strip()] = _keys(patterns) or None
    return found or None


_BRIEF_HEADING = re.compile(r"##[ \t]+(\S+)[ \t]*")


def parse_briefs(text):
    """Briefs written as “## key” headings, each followed by its text (lines of any kind,
    blank ones kept inside), as `{key: text}`; a heading with no text below it is null
    (an amend's way to remove a brief)."""
    found, key, lines = {}, None, []

    def keep():
        if key is not None:
            found[key] = "\n".join(lines).strip("\n") or None

    for number, line in enumerate((text or "").splitlines(), start=1):
        heading = _BRIEF_HEADING.fullmatch(line.rstrip())
        if heading:
            keep()
            key, lines = heading.group(1), []
        elif key is not None:
            lines.append(line.rstrip())
        elif line.strip():
            raise forms.ValidationError(
                f"Line {number}: start each brief with a heading line “## key”."
            )
    keep()
    return found or None


def graph_field(label, help_text, required=False):
    return forms.CharField(
        label=label,
        required=required,
        help_text=help_text,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
    )


NODES_HELP = "One node per line: key | title | the keys it needs, comma-separated (optional)."
NEEDS_HELP = "One node per line: node: the keys it needs, comma-separated."
BRIEFS_HELP = (
    "What an agent is given to do each node: a line “## key”, then the brief's lines, for"
    " each node that has one."
)
PATHS_HELP = (
    "One node per line: node: the path patterns it will touch, comma-separated (src/billing,"
    " docs/*.md, **/migrations); “node:” alone clears them."
)


class PlanForm(forms.Form):
    """A new plan, its nodes typed as lines."""

    id = forms.CharField(
        label="Id",
        required=False,
        max_length=vocabulary.SESSION_ID_MAX,
        help_text="Optional: made for you when blank.",
    )
    title = forms.CharField(label="Title", strip=False, max_length=vocabulary.MAX_LENGTH["title"])
    note = text_field("Note", "note", required=False)
    nodes = graph_field("Nodes", NODES_HELP, required=True)
    briefs = graph_field("Briefs", BRIEFS_HELP)

    def clean_nodes(self):
        return parse_nodes(self.cleaned_data["nodes"])

    def clean_briefs(self):
        return parse_briefs(self.cleaned_data["briefs"])

    def clean(self):
        data = super().clean()
        keys = {node["key"] for node in data.get("nodes") or ()}
        for key in data.get("briefs") or {}:
            if key not in keys:
                self.add_error("briefs", f"“## {key}” names no node of this plan.")
        return data

    def event_fields(self):
        data = self.cleaned_data
        briefs = {key: text for key, text in (data["briefs"] or {}).items() if text}
        nodes = [{**node, "brief": briefs[node["key"]]} if node["key"] in briefs else node
                 for node in data["nodes"]]  # fmt: skip
        return {"title": data["title"], "note": blank_to_none(data["note"]), "nodes": nodes}


class AmendForm(forms.Form):
    """Changes to a plan, applied in this order: add nodes, drop needs, add needs, retire."""

    expected_seq = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)
    nodes = graph_field("Add nodes", NODES_HELP)
    drop_needs = graph_field("Drop needs", NEEDS_HELP)
    needs = graph_field("Add needs", NEEDS_HELP)
    retire = forms.CharField(
        label="Retire", required=False, help_text="Keys of nodes to retire, comma-separated."
    )
    repo = forms.CharField(
        label="Repository",
        required=False,
        help_text="owner/name: the repository the nodes' paths are in.",
    )
    paths = graph_field("Set paths", PATHS_HELP)
    briefs = graph_field("Set briefs", BRIEFS_HELP + " A heading alone removes its brief.")
    note = text_field("Note", "note", required=False)

    def clean_paths(self):
        return parse_paths(self.cleaned_data["paths"])

    def clean_briefs(self):
        return parse_briefs(self.cleaned_data["briefs"])

    def clean_nodes(self):
        return parse_nodes(self.cleaned_data["nodes"])

    def clean_drop_needs(self):
        return parse_needs(self.cleaned_data["drop_needs"])

    def clean_needs(self):
        return parse_needs(self.cleaned_data["needs"])

    def clean_retire(self):
        return _keys(self.cleaned_data["retire"]) or None

    def event_fields(self):
        changes = (*vocabulary.GRAPH_FIELDS, "paths", "briefs")
        fields = {name: self.cleaned_data[name] for name in changes}
        repo = blank_to_none(self.cleaned_data["repo"].strip())
        return {**fields, "repo": repo, "note": blank_to_none(self.cleaned_data["note"])}


class BudgetForm(forms.Form):
    """A budget set from the plan page (an amend): the plan's, or one node's; the choices
    say what each has spent."""

    PLAN = "(plan)"  # no node key can be this: keys hold no parentheses

    expected_seq = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)
    owner = forms.ChoiceField(label="Whose budget")
    budget_usd = forms.DecimalField(
        label="New budget (US dollars)",
        min_value=Decimal("0.01"),
        max_value=vocabulary.BUDGET_MAX,
        decimal_places=2,
        max_digits=9,
        help_text="More than 0, at most 1,000,000, in whole cents.",
    )

    def __init__(self, *args, owners: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = owners

    def event_fields(self) -> dict:
        amount = self.cleaned_data["budget_usd"]
        number = int(amount) if amount == amount.to_integral_value() else float(amount)
        owner = self.cleaned_data["owner"]
        return {"budget_usd": number} if owner == self.PLAN else {"budgets": {owner: number}}


class MetricsWindowForm(forms.Form):
    """The metrics page's window: whole UTC days, `until` included."""

    since = forms.DateField(label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if any(day and not 2 <= day.year <= 9998 for day in (since, until)):
            raise forms.ValidationError("Dates must be in the years 2 to 9998.")
        if since and until:
            found = window.problem(*window.whole_days(since, until))
            if found == window.EMPTY:
                raise forms.ValidationError("The window is empty: From must not be after To.")
            if found == window.TOO_LONG:
                days = vocabulary.MAX_METRICS_WINDOW.days
                raise forms.ValidationError(f"The window may span at most {days} days.")
        return data


class TokenForm(forms.ModelForm):
    """A new token: its name (the model's field and length), what it may do and how long
    it lives; `tokens.create_token` makes it, so this form is never saved."""

    # Left out of a post, they are the page's defaults: read and write, 90 days.
    scope = forms.ChoiceField(
        label="It may",
        choices=[(tokens.WRITE, "read and write"), (tokens.READ, "read only")],
        initial=tokens.WRITE,
        widget=forms.RadioSelect,
        required=False,
    )
    expires_in = forms.ChoiceField(
        label="Expires",
        choices=[
            (str(days) if days else "never", f"in {days} days" if days else "never")
            for days in tokens.EXPIRY_CHOICES
        ],
        initial=str(tokens.EXPIRY_CHOICES[0]),
        required=False,
    )

    def clean_scope(self) -> str:
        return self.cleaned_data.get("scope") or tokens.WRITE

    def clean_expires_in(self) -> int | None:
        """Days, or None for a token that never expires."""
        chosen = self.cleaned_data.get("expires_in") or str(tokens.EXPIRY_CHOICES[0])
        return None if chosen == "never" else int(chosen)

    class Meta:
        model = ApiToken
        fields = ["name"]
        help_texts = {"name": "Who will use it, e.g. the agent's name: claude-on-laptop."}


class SubscriptionForm(forms.ModelForm):
    """A new webhook: where to, in which shape, and the feed's filters. `subscriptions.subscribe`
    makes it (with its secret and its cursor at the feed's end), so this form is never saved."""

    url = forms.URLField(
        label="URL",
        max_length=Subscription._meta.get_field("url").max_length,
        validators=[URLValidator(schemes=["http", "https"])],
        assume_scheme="https",
        help_text="Where each event is POSTed, e.g. https://hooks.slack.com/services/…",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Not Django's "---------": what leaving it says.
        self.fields["event_type"].choices = [
            ("", "every type"),
            *self.fields["event_type"].choices[1:],
        ]

    class Meta:
        model = Subscription
        fields = ["url", "payload", "event_type", "stream", "plan"]
        labels = {
            "event_type": "Only events of the type",
            "stream": "Only the events of the session or plan",
            "plan": "Only the events of the plan and its sessions",
        }
        help_texts = {
            "event_type": "Every type unless one is chosen.",
            "stream": "A session's or plan's id; empty for all.",
            "plan": "A plan's id: its events and those of the sessions on its nodes.",
        }

    def _stream_id(self, name: str) -> str:
        value = self.cleaned_data[name]
        problem = value and vocabulary.session_id_error(value)
        if problem:
            raise forms.ValidationError(f"An id {problem}.")
        return value

    def clean_stream(self) -> str:
        return self._stream_id("stream")

    def clean_plan(self) -> str:
        return self._stream_id("plan")
