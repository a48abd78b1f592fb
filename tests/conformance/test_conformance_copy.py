"""The suite's copy of the conformance cases is the contract's, file for file."""

import os

import pytest

from tests.conftest import CONFORMANCE, SHARED_CONFORMANCE


def files_under(folder):
    """The cases under `folder` (the suite's own test modules beside them excepted)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    }


def test_the_copy_holds_the_v1_to_v4_cases():
    names = files_under(CONFORMANCE)
    assert "expected.json" in names
    for version in ("v2", "v3"):
        assert f"{version}/expected.json" in names
        assert any(name.startswith(f"{version}/logs/") for name in names)
    assert "v4/paths.json" in names


@pytest.mark.skipif(
    not SHARED_CONFORMANCE.is_dir() and os.environ.get("CI") != "true",
    reason="../shared/conformance is not beside this clone; the copy is all there is",
)
def test_the_copy_matches_the_shared_conformance_cases():
    assert SHARED_CONFORMANCE.is_dir(), f"CI expects the shared cases at {SHARED_CONFORMANCE}"
    copy, shared = files_under(CONFORMANCE), files_under(SHARED_CONFORMANCE)
    assert sorted(copy) == sorted(shared)
    drifted = [name for name in shared if copy[name] != shared[name]]
    assert drifted == [], f"update tests/conformance/ from the shared cases: {drifted}"
