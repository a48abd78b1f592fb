"""The import-layers contract of `sessions/`, checked over each module's source.

Data flows one way: surfaces → rules → read models → store → domain. A module may
import its own layer and those below it, never one above; a surface never imports
another surface; `models` imports only the domain; and only the store touches the
database's connection, transactions, cursors or `Event.objects`.

Kept as a short AST walk rather than a linter plugin: the rules are few, and the
messages can say which rule a line breaks.
"""

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "sessions"

# Lowest first. A module's layer is that of the longest prefix that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("domain", ("sessions.domain",)),
    ("settings", ("sessions.config",)),
    ("models", ("sessions.models",)),
    ("store", ("sessions.store",)),
    ("read models", ("sessions.readmodels",)),
    ("rules", ("sessions.rules", "sessions.webhooks")),
    ("surface support", ("sessions.http", "sessions.templatetags")),
    (
        "surfaces",
        (
            "sessions.web",
            "sessions.api",
            "sessions.management",
            "sessions.admin",
            "sessions.urls",
            "sessions.apps",
        ),
    ),
)
# Each surface is its own island: none imports another (the wiring does: `urls` names
# every surface's views, `apps` connects the rules' signal handlers).
SURFACES = ("sessions.web", "sessions.api", "sessions.management", "sessions.admin")
WIRING = ("sessions.urls", "sessions.apps")
# `models` may import only these.
MODELS_MAY_IMPORT = ("sessions.domain",)
# What only the store may touch.
DATABASE_NAMES = frozenset(
    {"connection", "connections", "transaction", "IntegrityError", "DatabaseError"}
)
STORE = "sessions.store"


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    rule: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.rule}"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int | None:
    found = [
        (len(prefix), rank)
        for rank, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if _within(module, prefix)
    ]
    return max(found)[1] if found else None


def _surface_of(module: str) -> str | None:
    return next((s for s in SURFACES if _within(module, s)), None)


def module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(module: str, is_package: bool, node: ast.AST) -> Iterator[tuple[str, list[str]]]:
    """(module imported, names taken from it) of an import statement, made absolute."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, []
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        names = [alias.name for alias in node.names]
        yield base, names
        # `from sessions.store import streams` imports the module `sessions.store.streams`.
        for name in names:
            yield f"{base}.{name}", []


def check_source(module: str, source: str, is_package: bool = False) -> list[Violation]:
    """The contract's violations in one module's source."""
    found: list[Violation] = []
    own = layer_of(module)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target, names in _imported(module, is_package, node):
                found += _check_import(module, own, target, names, node.lineno)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "objects"
            and isinstance(node.value, ast.Name)
            and node.value.id == "Event"
            and not _within(module, STORE)
        ):
            found.append(Violation(module, node.lineno, "only the store reads Event.objects"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "cursor"
            and not _within(module, STORE)
        ):
            found.append(Violation(module, node.lineno, "only the store opens cursors"))
    return sorted(set(found), key=lambda v: (v.line, v.rule))


def _check_import(
    module: str, own: int | None, target: str, names: list[str], line: int
) -> list[Violation]:
    found = []
    if target == "django.db" and not _within(module, STORE):
        for name in DATABASE_NAMES.intersection(names):
            found.append(Violation(module, line, f"only the store imports django.db.{name}"))
    if not _within(target, "sessions") or own is None:
        return found
    theirs = layer_of(target)
    if theirs is None:
        return found
    if module == "sessions.models" and not any(_within(target, p) for p in MODELS_MAY_IMPORT):
        found.append(Violation(module, line, f"models imports only the domain, not {target}"))
    if theirs > own and not any(_within(module, w) for w in WIRING):
        found.append(
            Violation(
                module, line, f"{LAYERS[own][0]} may not import {target} ({LAYERS[theirs][0]})"
            )
        )
    mine, other = _surface_of(module), _surface_of(target)
    if mine and other and mine != other:
        found.append(Violation(module, line, f"surface {mine} imports surface {other}"))
    return found


def check_app() -> list[Violation]:
    """Every violation in `sessions/` (its migrations are history and import nothing)."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        found += check_source(module_name(path), path.read_text(), path.name == "__init__.py")
    return found
