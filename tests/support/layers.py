"""The import-layers contract of `sessions/`, checked over each module's source.

Data flows one way: surfaces → rules → read models → store → domain. A module may
import its own layer and those below it, never one above; a surface never imports
another surface; `models` imports only the domain; the domain imports no Django; the
store knows no HTTP; and only the store touches the database: its connection,
transactions, cursors, raw SQL, errors, querysets and model managers (`X.objects`,
`_default_manager`). The exemptions are Django's own: the admin and the auth commands
use its models as it means them to.

A room holds at most `MOST_LINES` lines (`check_sizes`).

Kept as a short AST walk rather than a linter plugin: the rules are few, and the
messages can say which rule a line breaks.
"""

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "sessions"

# Lowest first. A module's layer is that of the longest prefix that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("domain", ("sessions.domain",)),
    ("settings", ("sessions.config",)),
    ("models", ("sessions.models",)),
    ("store", ("sessions.store",)),
    ("read models", ("sessions.readmodels",)),
    ("rules", ("sessions.rules",)),
    ("surface support", ("sessions.http", "sessions.templatetags")),
    (
        "surfaces",
        (
            "sessions.web",
            "sessions.api",
            "sessions.webhooks",
            "sessions.integrations",
            "sessions.management",
            "sessions.admin",
            "sessions.urls",
            "sessions.apps",
        ),
    ),
)
# Each surface is its own island: none imports another (the wiring does: `urls` names
# every surface's views, `apps` connects the rules' signal handlers, and the `deliver`
# command starts the webhook worker, the outgoing surface).
SURFACES = (
    "sessions.web",
    "sessions.api",
    "sessions.webhooks",
    "sessions.integrations",
    "sessions.management",
    "sessions.admin",
)
WIRING = ("sessions.urls", "sessions.apps", "sessions.management.commands.deliver")
# `models` may import only these.
MODELS_MAY_IMPORT = ("sessions.domain",)
# What only the store may import from Django's database package: the connection, its
# transactions, its errors and querysets.
DATABASE_ERRORS = frozenset(
    {
        "Error",
        "DatabaseError",
        "DataError",
        "IntegrityError",
        "InterfaceError",
        "InternalError",
        "NotSupportedError",
        "OperationalError",
        "ProgrammingError",
    }
)
DATABASE_NAMES = DATABASE_ERRORS | {"connection", "connections", "transaction", "router"}
DATABASE_MODULES = ("django.db", "django.db.utils", "django.db.transaction")
QUERY_NAMES = frozenset({"QuerySet", "RawSQL"})
QUERY_MODULES = ("django.db.models", "django.db.models.query", "django.db.models.expressions")
# Attributes and calls that run SQL: a model's manager, its raw queries, a cursor.
MANAGER_ATTRIBUTES = frozenset({"objects", "_default_manager", "_base_manager"})
SQL_CALLS = frozenset({"cursor", "raw", "execute", "executemany"})
# What the store may not know: requests and answers.
HTTP_MODULES = ("django.http", "django.urls", "django.shortcuts", "ninja", "django_htmx")
HTTP_OWN = ("sessions.http",)
STORE = "sessions.store"
DOMAIN = "sessions.domain"
# Django's own, used as it means them to be: the admin reads its models through their
# managers, and the auth commands make users and tokens by their managers.
MAY_QUERY = (
    "sessions.admin",
    "sessions.models",
    "sessions.management.commands.create_token",
    "sessions.management.commands.ensure_admin",
)
MOST_LINES = 500
# One door for settings: only `sessions.config` reads Django's settings (and `models`,
# which names the user model as Django means it to); only `ct.environment` reads `ct`'s
# environment.
SETTINGS_DOOR = ("sessions.config", "sessions.models")
ENVIRONMENT_DOOR = "ct.environment"
ENVIRONMENT_READS = frozenset({"environ", "environb", "getenv", "getenvb"})


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
    """The module a file of `sessions/` or of the client (`cli/`, whose package is `ct`)
    is imported as."""
    root = APP.parent if path.is_relative_to(APP) else APP.parent / "cli"
    parts = path.relative_to(root).with_suffix("").parts
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


def _may_query(module: str) -> bool:
    return any(_within(module, m) for m in (STORE, *MAY_QUERY))


def _sql_use(module: str, node: ast.AST) -> Violation | None:
    """A manager read, raw SQL or a cursor outside the store, if `node` is one."""
    if _may_query(module):
        return None
    if isinstance(node, ast.Attribute) and node.attr in MANAGER_ATTRIBUTES:
        return Violation(module, node.lineno, f"only the store reads a model's .{node.attr}")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    ):
        return Violation(module, node.lineno, f"only the store runs SQL (.{node.func.attr}())")
    return None


def check_source(module: str, source: str, is_package: bool = False) -> list[Violation]:
    """The contract's violations in one module's source."""
    found: list[Violation] = []
    own = layer_of(module)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target, names in _imported(module, is_package, node):
                found += _check_import(module, own, target, names, node.lineno)
        elif (violation := _sql_use(module, node)) is not None:
            found.append(violation)
    return sorted(set(found), key=lambda v: (v.line, v.rule))


def _check_import(
    module: str, own: int | None, target: str, names: list[str], line: int
) -> list[Violation]:
    found = []
    if not _may_query(module):
        if target in DATABASE_MODULES:
            for name in DATABASE_NAMES.intersection(names):
                found.append(Violation(module, line, f"only the store imports {target}.{name}"))
        if target in QUERY_MODULES:
            for name in QUERY_NAMES.intersection(names):
                found.append(Violation(module, line, f"only the store imports {target}.{name}"))
    if target == "django.conf" and "settings" in names and module not in SETTINGS_DOOR:
        found.append(Violation(module, line, "only sessions.config reads Django's settings"))
    if _within(module, DOMAIN) and _within(target, "django"):
        found.append(Violation(module, line, f"the domain imports no Django ({target})"))
    if _within(module, STORE) and any(_within(target, h) for h in HTTP_MODULES + HTTP_OWN):
        found.append(Violation(module, line, f"the store knows no HTTP ({target})"))
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
    if mine and other and mine != other and not any(_within(module, w) for w in WIRING):
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


def _rooms() -> Iterator[Path]:
    for folder in (APP, APP.parent / "cli"):
        for path in sorted(folder.rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def lines_over(most: int, sources: dict[str, str]) -> list[str]:
    """The rooms (name: source) longer than `most` lines, with their lengths."""
    return [
        f"{name}: {count} lines"
        for name, source in sources.items()
        if (count := len(source.splitlines())) > most
    ]


def check_sizes() -> list[str]:
    """The modules of `sessions/` and `cli/` longer than `MOST_LINES` lines."""
    root = APP.parent
    return lines_over(
        MOST_LINES, {path.relative_to(root).as_posix(): path.read_text() for path in _rooms()}
    )


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Which of `sources` (module: (source, is a package)) each one imports, at any depth
    of its code (a lazy import is a dependency too). A module's import of a package that
    holds it (`from sessions.store import streams`, inside the store) is not counted: a
    package's `__init__` gathering its own modules is no circle."""
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        targets = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target, _ in _imported(module, is_package, node):
                    if target in sources and target != module and not _within(module, target):
                        targets.add(target)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of `graph`: each group of modules that reach one another, sorted."""
    reaches = {module: _reachable(graph, module) for module in graph}
    circles = {
        tuple(sorted(m for m in reaches[module] if module in reaches[m]))
        for module in graph
        if module in reaches[module]
    }
    return sorted(list(circle) for circle in circles)


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def check_circles() -> list[list[str]]:
    """The import circles among the modules of `sessions/` and `cli/`."""
    sources = {
        module_name(path): (path.read_text(), path.name == "__init__.py") for path in _rooms()
    }
    return import_cycles(import_graph(sources))


def check_client_source(module: str, source: str) -> list[Violation]:
    """A read of the environment in a module of `ct` other than its one door."""
    if module == ENVIRONMENT_DOOR:
        return []
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT_READS:
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [node.lineno for a in node.names if a.name in ENVIRONMENT_READS]
    rule = f"only {ENVIRONMENT_DOOR} reads the environment"
    return [Violation(module, line, rule) for line in sorted(set(found))]


def check_client() -> list[Violation]:
    """Every violation in `cli/ct/`."""
    return [
        violation
        for path in sorted((APP.parent / "cli" / "ct").rglob("*.py"))
        for violation in check_client_source(module_name(path), path.read_text())
    ]
