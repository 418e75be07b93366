"""A text editor ``view`` of a large directory states the exact total (issue 22, item 15)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import run_text_editor
from dsh_fs.fs import FsDirEntry, FsTarget
from dsh_fs.providers import SandboxFileSystem
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

HEADER = "Here's the files and directories up to 2 levels deep in {}, excluding hidden items:"


class _NoFullListing(SandboxFileSystem):
    """A sandbox whose `list_dir` (one `lstat` per child) must not be used by a view."""

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        raise AssertionError("a directory view listed every child with its metadata")


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    root = tmp_path / "wide"
    root.mkdir()
    for n in range(5000):
        (root / f"f{n:05}").touch()
    for name in (".git", ".env", "-first"):
        (root / name).mkdir()
    (root / "-first" / "inside").touch()
    return root.resolve()


@pytest.fixture
async def wide_session(wide: Path) -> AsyncIterator[Session]:
    async with Workspace(_NoFullListing([wide]), cwd=wide) as workspace:
        yield workspace.session()


async def test_a_wide_directory_view_counts_every_visible_top_entry(
    wide_session: Session, wide: Path
) -> None:
    outcome = await run_text_editor(wide_session, {"command": "view", "path": "."})
    lines = outcome.text.splitlines()
    assert lines[0] == HEADER.format(wide)
    assert lines[1] == str(wide)
    assert lines[2] == f"{wide}/-first"
    assert lines[3] == f"{wide}/f00000"
    assert len(lines) == 2 + 1000 + 1
    assert lines[-1] == (
        "(Showing 1000 of 5001 entries at the top level; subdirectories are not expanded. "
        "View a subdirectory to see inside it.)"
    )


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    root = tmp_path / "deep"
    for d in range(4):
        (root / f"d{d}" / ".hidden").mkdir(parents=True)
        for n in range(300):
            (root / f"d{d}" / f"f{n:03}").touch()
    (root / "top.txt").touch()
    (root / ".secret").touch()
    return root.resolve()


async def test_the_total_counts_the_second_level_beyond_what_is_shown(deep: Path) -> None:
    async with Workspace(_NoFullListing([deep]), cwd=deep) as workspace:
        outcome = await run_text_editor(workspace.session(), {"command": "view", "path": "."})
    lines = outcome.text.splitlines()
    assert lines[2:4] == [f"{deep}/d0", f"{deep}/d0/f000"]
    assert f"{deep}/d3" in lines
    assert len(lines) == 2 + 1000 + 1
    # 4 directories + 4 x 300 files + top.txt; hidden names are not counted.
    assert lines[-1] == "(Showing 1000 of 1205 entries.)"


async def test_a_directory_that_fits_has_no_footer(deep: Path) -> None:
    async with Workspace.sandbox(deep / "d1") as workspace:
        outcome = await run_text_editor(workspace.session(), {"command": "view", "path": "."})
    lines = outcome.text.splitlines()
    assert len(lines) == 2 + 300
    assert lines[-1] == f"{deep}/d1/f299"
