"""The glob rules of a node's path patterns, defined once: `ct`'s hooks match a written
path against other sessions' reservations with them, and the tower (its
`sessions.domain.paths`) imports them, so both answer alike. The standard library only.

In a pattern `*` matches any run of characters within one segment and `?` one character
within a segment; a segment that is exactly `**` matches any number of whole segments,
none included (a `**` among other characters of a segment acts as `*`); anything else
matches itself, case-sensitively. A pattern with no wildcard also covers everything
under it (`src/billing` covers `src/billing/ledger.py`); one with a wildcard covers only
what it matches.

No regular expression is built from a pattern: one with many `*` (`*a*a*a*a*b`) makes a
backtracking engine try every way of splitting the text, exponential in the stars, and a
pattern is anyone's input. Here a segment is matched in one pass (`segment_matches`) and
a path segment by segment, so a match costs at most about the pattern's length times the
path's (200 × 500 characters at the caps), whatever the pattern.
"""

WILDCARDS = frozenset("*?")


def has_wildcard(text: str) -> bool:
    return not WILDCARDS.isdisjoint(text)


def _fits(piece: str, text: str, at: int) -> bool:
    """Whether `piece` (literal characters and `?`) matches `text` at `at`, in full."""
    if at < 0 or at + len(piece) > len(text):
        return False
    if "?" not in piece:
        return text.startswith(piece, at)
    given = text[at : at + len(piece)]
    return all(wanted in ("?", char) for wanted, char in zip(piece, given, strict=True))


def _find(piece: str, text: str, start: int, end: int) -> int:
    """The first place in `text[start:end]` where `piece` (literal characters and `?`)
    matches in full, or -1."""
    if "?" not in piece:
        return text.find(piece, start, end)
    for at in range(start, end - len(piece) + 1):
        if _fits(piece, text, at):
            return at
    return -1


def segment_matches(pattern: str, text: str) -> bool:
    """Whether one segment of a pattern matches one segment of a path, whole.

    The pattern is the pieces between its stars. The first must start the text, the last
    end it, and each one between is taken where it first fits after the one before: a
    star before it could have eaten anything up to there, so a later place never matches
    where the first does not. Each piece is looked for once; nothing is retried."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return len(pattern) == len(text) and _fits(pattern, text, 0)
    first, *middle, last = pieces
    end = len(text) - len(last)
    if len(first) > end or not _fits(first, text, 0) or not _fits(last, text, end):
        return False
    at = len(first)
    for piece in middle:
        if piece:
            found = _find(piece, text, at, end)
            if found < 0:
                return False
            at = found + len(piece)
    return True


def segments_match(pattern: list[str], path: list[str]) -> bool:
    """Whether a pattern's segments match a path's, whole: the positions in `path` each
    prefix of `pattern` can have reached, a `**` adding every later position, any other
    segment moving one on where it matches."""
    reached = {0}
    for segment in pattern:
        if segment == "**":
            reached = set(range(min(reached), len(path) + 1))
        else:
            reached = {
                i + 1 for i in reached if i < len(path) and segment_matches(segment, path[i])
            }
        if not reached:
            return False
    return len(path) in reached


def matches(pattern: str, path: str) -> bool:
    """Whether `pattern` covers `path` (both relative to the repository's root)."""
    wanted, given = pattern.split("/"), path.split("/")
    if not has_wildcard(pattern):
        return given[: len(wanted)] == wanted  # a folder covers what is under it
    # The segments before the first wildcard must be the path's own: most patterns are
    # ruled out here, before the walk (a hook is a new process, with many patterns).
    for index, segment in enumerate(wanted):
        if has_wildcard(segment):
            break
        if index >= len(given) or given[index] != segment:
            return False
    return segments_match(wanted, given)
