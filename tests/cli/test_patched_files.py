"""The files an `apply_patch` patch touches (`ct.space.patched_files`), which reservations
check and heartbeats report: each file it adds, updates, deletes or moves one to, once,
in order, and nothing else of the patch."""

from ct.space import PATHS_MAX, patched_files
from hypothesis import given
from hypothesis import strategies as st


def test_every_header_names_its_file_once_in_order():
    patch = (
        "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: b.py\n*** Move to: c.py\n"
        "@@\n-*** Add File: not-a-header.py\n*** Delete File: d.py\n*** Update File: a.py\n"
        "*** End Patch\n"
    )
    assert patched_files(patch) == ["a.py", "b.py", "c.py", "d.py"]


def test_a_patch_naming_more_files_than_a_heartbeat_carries_is_cut_there():
    patch = "".join(f"*** Add File: f{n}.py\n+x\n" for n in range(PATHS_MAX + 50))
    assert len(patched_files(patch)) == PATHS_MAX


@given(st.lists(st.text(alphabet="ab/._-+*: @", max_size=30), max_size=20))
def test_body_lines_never_name_a_file(lines):
    body = "".join(f"{mark}{line}\n" for line in lines for mark in "+- ")
    assert patched_files("*** Begin Patch\n" + body + "*** End Patch\n") == []
