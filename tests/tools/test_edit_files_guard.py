"""`edit_files` publishes each file under a guard given the bytes staging read (issue 42):
the provider compares them with the file instead of hashing it, and that compare must see
every change another program makes between staging and publication (a same-size rewrite
in the same timestamp tick, which the version alone cannot tell) and no change where there
is none (a touch).

The writer runs at a deterministic point: a wrapper's hook right before the set's first
write, after every edit is staged (as in `test_edit_files.py`). Coarse timestamps are faked
with `timestamp_granularity_ns`, as in `tests/providers/test_versions.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Session, ToolResult, Workspace
from dsh_fs.fs import FsCapture, FsTarget, FsWriteOutcome, WrapperFileSystem, WriteGuard
from dsh_fs.providers import LocalFileSystem

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick (a 1000 s one
# was crossed once in a while between two steps of a test)
NAMES = ("a.py", "b.py", "c.py")
STALE_REMEDY = " \u2014 re-read the file, then retry"


class BeforePublication(WrapperFileSystem):
    """`provider`, running `hook` once right before the first write: after every edit of
    the set is staged, before any file is published."""

    def __init__(self, provider: LocalFileSystem, hook: Callable[[], None]) -> None:
        super().__init__(provider)
        self.hook: Callable[[], None] | None = hook

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return await super().write_text(target, content, expected, capture=capture)


def one(name: str) -> dict[str, Any]:
    return {"file_path": name, "old_string": "old_name", "new_string": "new_name"}


async def three_read_files(root: Path, session: Session) -> dict[str, str]:
    """a.py, b.py, c.py (a few KB each), each read by `session`; their contents by name."""
    contents = {}
    for name in NAMES:
        contents[name] = f"def {name[0]}():\n    return old_name\n" + "# padding\n" * 400
        (root / name).write_text(contents[name], encoding="utf-8")
        result = await session.call("read", {"file_path": name})
        assert not result.is_error, result.text
    return contents


def on_disk(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text(encoding="utf-8") for name in NAMES}


async def run_set(
    root: Path, hook: Callable[[Path], None], position: int, granularity: int = 1
) -> tuple[ToolResult, dict[str, str]]:
    """Three files read, then one set renaming in all three, with `hook` run on the file at
    `position` between staging and publication; the result and the contents read."""
    changed = root / NAMES[position - 1]
    provider = LocalFileSystem(root, timestamp_granularity_ns=granularity)
    workspace = Workspace(BeforePublication(provider, lambda: hook(changed)), cwd=str(root))
    try:
        session = workspace.session()
        before = await three_read_files(root, session)
        result = await session.call("edit_files", {"edits": [one(name) for name in NAMES]})
    finally:
        await workspace.aclose()
    return result, before


def rewrite_in_place(path: Path) -> None:
    """Another program rewriting the file without dsh-fs: same inode, same size."""
    data = path.read_bytes()
    with path.open("r+b") as f:
        f.write(data.replace(b"padding", b"PADDING"))


def replace_same_size(path: Path) -> None:
    """Another program replacing the file with new bytes of the same size."""
    path.write_bytes(path.read_bytes().replace(b"padding", b"PADDING"))


@pytest.mark.parametrize("position", [1, 2, 3])
@pytest.mark.parametrize(
    ("change", "granularity"),
    [(rewrite_in_place, COARSE), (replace_same_size, 1)],
    ids=["same-tick-rewrite", "same-size-replace"],
)
async def test_a_same_size_change_between_staging_and_publication_rolls_the_set_back(
    root: Path, position: int, change: Callable[[Path], None], granularity: int
) -> None:
    result, before = await run_set(root, change, position, granularity)
    changed = root / NAMES[position - 1]
    assert result.code == "FS_STALE_VERSION"
    assert result.text == (
        f'Error: edit {position} of 3 ("{changed}"): cannot edit "{changed}": '
        "file changed since it was read" + STALE_REMEDY
    )
    before[changed.name] = before[changed.name].replace("padding", "PADDING")
    assert on_disk(root) == before


def touch(path: Path) -> None:
    """Another program changing only the file's times."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_a_touch_between_staging_and_publication_still_publishes_the_set(
    root: Path, position: int
) -> None:
    result, before = await run_set(root, touch, position)
    assert not result.is_error, result.text
    assert on_disk(root) == {
        name: text.replace("old_name", "new_name") for name, text in before.items()
    }


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfdef a():\r\n    return old_name\r\n" + b"# padding\r\n" * 400,
        b"def a():\r\n    return old_name\n# mixed\r" + "# caf\u00e9\n".encode() * 400,
    ],
    ids=["bom-crlf", "mixed-endings"],
)
async def test_the_bytes_staging_read_match_a_file_whose_text_keeps_a_bom_or_line_breaks(
    root: Path, data: bytes
) -> None:
    """The guard's bytes are the staged text encoded again: for a file with a BOM, CRLF or
    lone CR line breaks, they must be the file's very bytes, or every set on a file in the
    racy window (all of them under a 1000 s tick) would be refused stale."""
    path = root / "a.py"
    path.write_bytes(data)
    provider = LocalFileSystem(root, timestamp_granularity_ns=COARSE)
    workspace = Workspace(provider, cwd=str(root))
    try:
        session = workspace.session()
        assert not (await session.call("read", {"file_path": "a.py"})).is_error
        result = await session.call("edit_files", {"edits": [one("a.py")]})
    finally:
        await workspace.aclose()
    assert not result.is_error, result.text
    assert path.read_bytes() == data.replace(b"old_name", b"new_name")


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_a_same_tick_rewrite_after_the_read_and_before_the_set_is_stale(
    root: Path, position: int
) -> None:
    """The rewrite lands before the call, so staging reads it: the version is the same (one
    tick), and only the bytes the session read tell it. `edit` refuses this; the set must
    too, and staging's read must not vouch for what it found (it did: the set published the
    edit onto text the session never saw)."""
    changed = root / NAMES[position - 1]
    workspace = Workspace(LocalFileSystem(root, timestamp_granularity_ns=COARSE), cwd=str(root))
    try:
        session = workspace.session()
        before = await three_read_files(root, session)
        rewrite_in_place(changed)
        result = await session.call("edit_files", {"edits": [one(name) for name in NAMES]})
    finally:
        await workspace.aclose()
    assert result.code == "FS_STALE_VERSION"
    assert result.text == (
        f'Error: edit {position} of 3 ("{changed}"): cannot edit "{changed}": '
        "file changed since it was read" + STALE_REMEDY
    )
    before[changed.name] = before[changed.name].replace("padding", "PADDING")
    assert on_disk(root) == before


async def test_after_a_same_tick_rewrite_a_read_again_lets_the_set_publish(root: Path) -> None:
    """Refused stale, the session reads the file again (the remedy), still at the same
    version: that read is what it saw now, and the set publishes (no refusal for ever)."""
    workspace = Workspace(LocalFileSystem(root, timestamp_granularity_ns=COARSE), cwd=str(root))
    try:
        session = workspace.session()
        before = await three_read_files(root, session)
        rewrite_in_place(root / "b.py")
        edits = {"edits": [one(name) for name in NAMES]}
        assert (await session.call("edit_files", edits)).code == "FS_STALE_VERSION"
        assert not (await session.call("read", {"file_path": "b.py"})).is_error
        result = await session.call("edit_files", edits)
    finally:
        await workspace.aclose()
    assert not result.is_error, result.text
    before["b.py"] = before["b.py"].replace("padding", "PADDING")
    assert on_disk(root) == {
        name: text.replace("old_name", "new_name") for name, text in before.items()
    }
