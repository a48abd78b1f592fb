"""Forms of the board and session page. They shape the input; `append_event` judges it."""

from dataclasses import dataclass

from django import forms

from . import vocabulary


@dataclass(frozen=True)
class Action:
    slug: str
    event_type: str
    button: str
    field: str  # "reason" or "note"

    @property
    def label(self):
        return self.field.capitalize()

    @property
    def required(self):
        return self.field in vocabulary.REQUIRED_FIELDS.get(self.event_type, ())

    @property
    def max_length(self):
        return vocabulary.MAX_LENGTH[self.field]


ACTIONS = {
    action.slug: action
    for action in (
        Action("block", vocabulary.BLOCK, "Block", "reason"),
        Action("unblock", vocabulary.UNBLOCK, "Unblock", "note"),
        Action("review", vocabulary.REVIEW, "Send to review", "note"),
        Action("close", vocabulary.CLOSE, "Close", "note"),
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
    """One action on one session: a Reason (block) or a Note, and the seq the viewer saw."""

    expected_seq = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)

    def __init__(self, action, session_id, *args, **kwargs):
        kwargs.setdefault("auto_id", f"id_{session_id}_{action.slug}_%s")
        super().__init__(*args, **kwargs)
        self.action = action
        self.fields[action.field] = text_field(action.label, action.field, action.required)

    @property
    def text(self):
        return self[self.action.field]

    def event_fields(self):
        return {self.action.field: blank_to_none(self.cleaned_data[self.action.field])}
