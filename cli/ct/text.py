"""Text as the tower takes it. The tower refuses control characters, bidirectional
controls and the other invisible format characters in every text field (docs/rules.md,
"Vocabulary"); a hook sends a person's words that may hold them (an ANSI escape pasted
from a terminal, U+202E), and a refusal would set the event aside while the agent goes
on. So they are taken out before sending: the words arrive, less what cannot show.
The ranges are the tower's (`sessions.domain.vocabulary`), which `ct` cannot import:
tests/cli/test_text.py checks that the two agree."""

import re

INVISIBLE = (
    "\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
)
_REFUSED = {
    "line": re.compile(f"[\u0000-\u001f{INVISIBLE}]"),
    "text": re.compile(f"[\u0000-\u0008\u000b-\u001f{INVISIBLE}]"),
}
# An ANSI escape sequence (colour, cursor moves): its visible letters mean nothing either.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def clean(value: str, limit: int, kind: str = "text") -> str | None:
    """`value` without what the tower refuses, cut to `limit` characters, stripped; None
    when nothing is left to say. `kind` "line" for titles (one line), "text" for notes
    and reasons (tabs and newlines kept)."""
    cleaned = _REFUSED[kind].sub("", _ANSI.sub("", value))[:limit].strip()
    return cleaned or None
