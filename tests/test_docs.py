"""The repository explains itself: no file cites a document outside it, every citation
of `docs/rules.md` names one of its sections, and the table of caches in
`docs/design.md` names every read model a process keeps."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from sessions import readmodels
from sessions.readmodels import kept

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "rules.md"
DESIGN_NOTES = ROOT / "docs" / "design.md"

TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".html", ".js", ".css", ".json", ".jsonl"}
# What tools and runs leave in a checkout, beside the repository's own files.
NOT_OURS = {".git", ".venv", "node_modules", "__pycache__", "staticfiles", "test-artifacts"}
NOT_OURS |= {".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".schemathesis"}
# Spelled in pieces, so that this file does not cite what it looks for.
OUTSIDE = re.compile("|".join([r"DESIGN(?:\.md| v[0-9])", r"\.\./" + "shared"]))
# The team's conformance cases are copied byte for byte (their own words, which name the
# team's contract); the two files that check the copy against the team's folder name it.
COPIED = ROOT / "tests" / "conformance"
DRIFT_CHECKS = {
    ROOT / "tests" / "conftest.py",
    COPIED / "test_conformance_copy.py",
    Path(__file__).resolve(),
}
CITATION = re.compile(r'docs/rules\.md, "([^"]+)"')


def our_text_files():
    for path in ROOT.rglob("*"):
        parts = set(path.relative_to(ROOT).parts)
        if parts & NOT_OURS or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name == "Makefile":
            yield path


def is_the_copy(path):
    return path.is_relative_to(COPIED) and path.suffix != ".py"


def rules_sections():
    return {line[3:].strip() for line in RULES.read_text().splitlines() if line[:3] == "## "}


def test_no_file_cites_a_document_outside_the_repository():
    citing = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in our_text_files()
        if not is_the_copy(path) and path not in DRIFT_CHECKS
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert citing == []


def test_every_citation_of_the_rules_names_one_of_their_sections():
    sections = rules_sections()
    cited = {
        " ".join(word for word in name.split() if word != "#")  # a name across comment lines
        for path in our_text_files()
        for name in CITATION.findall(path.read_text(errors="replace"))
    }
    assert cited, "the code cites the rules by section"
    assert cited - sections == set()


@pytest.mark.parametrize("line", ['see DESIGN.md, "Spend"', "(DESIGN v5)", "../shared/agents"])
def test_the_outside_pattern_catches_each_way_of_citing_outside(line):
    assert OUTSIDE.search(line)


def cache_names():
    """Each registered read model's names, `module.ATTRIBUTE`, as the modules of
    `sessions.readmodels` hold them."""
    names: dict[int, set[str]] = {}
    for module_info in pkgutil.iter_modules(readmodels.__path__):
        module = importlib.import_module(f"{readmodels.__name__}.{module_info.name}")
        for attribute, value in vars(module).items():
            if isinstance(value, kept.ReadModel):
                names.setdefault(id(value), set()).add(f"{module_info.name}.{attribute}")
    return names


def caches_table():
    section = DESIGN_NOTES.read_text().split("## Caches kept per process", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\| `([\w.]+)` \|", section, flags=re.MULTILINE)


def test_the_caches_table_names_each_registered_read_model_once():
    names = cache_names()
    table = caches_table()
    assert len(table) == len(set(table))
    listed = [model for model in kept.registered() if names.get(id(model), set()) & set(table)]
    assert len(listed) == len(kept.registered()) == len(table)
