"""Space (docs/rules.md, "Space"): the paths a node will touch, as glob patterns relative to
its plan's repository, and whether a path or another pattern may fall under them. Pure.

What a pattern matches is `ct.globs` (the client's module, the standard library only):
one definition of the glob rules for the hooks and the tower, matched segment by segment
in bounded time, with no regular expression built from a pattern.

Two patterns *may overlap* when the segments of one's literal prefix (those before its
first segment holding a wildcard; all of them for a pattern with none) are a prefix of
the other's. It is a cheap, conservative test: it may say two patterns overlap when no
path matches both, never the reverse.
"""

from collections.abc import Collection, Mapping, Sequence

from ct.globs import has_wildcard, matches

__all__ = ["has_wildcard", "matches"]  # the glob rules, for the tower's callers

PATTERN_MAX, PATTERNS_MAX = 200, 50  # a pattern's characters; patterns on one node
PATH_MAX, PATHS_MAX = 500, 100  # a touched path's characters; paths in one report
# The shape `path_error` and `pattern_error` allow (lengths apart), as one regular
# expression without lookaround (ECMA 262 and Python alike read it): segments of anything
# but '/' and control characters, none empty, '.' or '..'. The API's schema documents it.
_ANY = r"[^/\x00-\x1f\x7f]"
_NO_DOT = r"[^/.\x00-\x1f\x7f]"
_SEGMENT = f"(?:{_NO_DOT}{_ANY}*|\\.{_NO_DOT}{_ANY}*|\\.\\.{_ANY}+)"
SHAPE = f"^{_SEGMENT}(?:/{_SEGMENT})*$"


def segments(text: str) -> list[str]:
    return text.split("/")


def _segment_error(text: str) -> str | None:
    if any(ord(char) < 32 or char == "\x7f" or "\ud800" <= char <= "\udfff" for char in text):
        return f"must not hold control characters ({text!r})"
    if text.startswith("/"):
        return f"must be relative to the repository's root: no leading '/' ({text!r})"
    if any(part in ("", ".", "..") for part in segments(text)):
        return f"must not hold an empty, '.' or '..' segment ({text!r})"
    return None


def pattern_error(pattern: object) -> str | None:
    """Why `pattern` is not a node's path pattern, or None."""
    if not isinstance(pattern, str) or not 1 <= len(pattern) <= PATTERN_MAX:
        return f"each pattern must be text of 1–{PATTERN_MAX} characters"
    return _segment_error(pattern)


def patterns_error(patterns: object) -> str | None:
    """Why `patterns` is not a node's `paths`, or None: 1–50 patterns."""
    if not isinstance(patterns, list) or not 1 <= len(patterns) <= PATTERNS_MAX:
        return f"must be a list of 1–{PATTERNS_MAX} patterns"
    for pattern in patterns:
        problem = pattern_error(pattern)
        if problem:
            return problem
    return None


def path_error(path: object) -> str | None:
    """Why `path` is not a repository-relative path a report may name, or None."""
    if not isinstance(path, str) or not 1 <= len(path) <= PATH_MAX:
        return f"each path must be text of 1–{PATH_MAX} characters"
    return _segment_error(path)


def literal_prefix(pattern: str) -> tuple[str, ...]:
    """The segments of `pattern` before its first segment holding a wildcard (all of
    them for a pattern with none)."""
    found = []
    for segment in segments(pattern):
        if has_wildcard(segment):
            break
        found.append(segment)
    return tuple(found)


def may_overlap(a: str, b: str) -> bool:
    """Whether two patterns may cover a path in common: one's literal prefix is a prefix
    of the other's."""
    first, second = literal_prefix(a), literal_prefix(b)
    shorter, longer = (first, second) if len(first) <= len(second) else (second, first)
    return longer[: len(shorter)] == shorter


class _Branch:
    """One literal prefix in an `OverlapIndex`: the patterns with exactly that prefix,
    by owner, and the branches of the longer prefixes under it."""

    __slots__ = ("_below", "children", "held")

    def __init__(self) -> None:
        self.children: dict[str, _Branch] = {}
        self.held: dict[str, list[str]] = {}
        self._below: frozenset[str] | None = None

    def below(self) -> frozenset[str]:
        """The owners of every pattern here or under here (worked out once)."""
        if self._below is None:
            found = set(self.held)
            for child in self.children.values():
                found |= child.below()
            self._below = frozenset(found)
        return self._below


class OverlapIndex:
    """Whose patterns may overlap a pattern, or cover a path, without a scan of every
    pattern: the owners' literal prefixes in a tree of segments. A pattern's prefix (or
    a path) walked down the tree meets the patterns whose prefix is a prefix of its own;
    for a pattern, the subtree where the walk ends holds those whose prefix it is a
    prefix of.

    Its cost is bounded by the prefix's length and the owners found, never by the number
    of patterns: each subtree's owners are gathered once, and each prefix's answer is
    kept, so the many patterns with an empty prefix (`**/…`) cost one look-up between
    them, not a walk of the whole tree each (issue 52: a 500-node plan's view took
    seconds)."""

    def __init__(self, patterns: Mapping[str, Sequence[str]]) -> None:
        self._root = _Branch()
        self._answers: dict[tuple[str, ...], frozenset[str]] = {}
        for owner, owned in patterns.items():
            for pattern in owned:
                here = self._root
                for segment in literal_prefix(pattern):
                    here = here.children.setdefault(segment, _Branch())
                here.held.setdefault(owner, []).append(pattern)

    def owners(self, pattern: str) -> frozenset[str]:
        """The owners with a pattern that may overlap `pattern`."""
        return self.owners_of_prefix(literal_prefix(pattern))

    def owners_of_prefix(self, prefix: tuple[str, ...]) -> frozenset[str]:
        """The owners with a pattern that may overlap a pattern of literal prefix
        `prefix`: those whose prefix leads it, and those it leads."""
        found = self._answers.get(prefix)
        if found is None:
            found = self._answers[prefix] = self._walk(prefix)
        return found

    def _walk(self, prefix: tuple[str, ...]) -> frozenset[str]:
        leading: set[str] = set()
        here = self._root
        for segment in prefix:
            leading.update(here.held)
            child = here.children.get(segment)
            if child is None:
                return frozenset(leading)
            here = child
        return here.below() | leading

    def covering(self, path: str, among: Collection[str] | None = None) -> set[str]:
        """The owners (of `among`, when given) with a pattern that covers `path`: only the
        patterns whose literal prefix leads the path are matched, and only the owners'
        asked about."""
        found: set[str] = set()
        here: _Branch | None = self._root
        walked = iter(segments(path))
        while here is not None:
            held = here.held
            owners = held if among is None or len(held) <= len(among) else among
            for owner in owners:
                if owner in found or (among is not None and owner not in among):
                    continue
                if any(matches(pattern, path) for pattern in held.get(owner, ())):
                    found.add(owner)
            segment = next(walked, None)
            here = here.children.get(segment) if segment is not None else None
        return found
