"""A change set's publication is one batch (`FileSystem.batch`): its files' directory is
fsynced once, after the last file, and each file's journal entry is committed only then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.providers import LocalFileSystem

from ..providers.test_local_batch import spy_on_directory_fsync

pytestmark = pytest.mark.anyio

NAMES = ("a.py", "b.py", "c.py")


def edits() -> list[dict[str, Any]]:
    return [{"file_path": name, "old_string": "old", "new_string": "new"} for name in NAMES]


async def test_a_journaled_set_commits_its_entries_once_its_files_are_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name in NAMES:
        (root / name).write_text("old\n", encoding="utf-8")
    async with Workspace.local(root, journal=tmp_path / "store") as workspace:
        journal = workspace.journal
        assert journal is not None
        committed_while_publishing: list[int] = []
        write_text = LocalFileSystem.write_text

        async def spying(self: LocalFileSystem, *args: Any, **kwargs: Any) -> Any:
            committed_while_publishing.append(len(await journal.entries()))
            return await write_text(self, *args, **kwargs)

        monkeypatch.setattr(LocalFileSystem, "write_text", spying)
        session = workspace.session()
        for name in NAMES:
            await session.call("read", {"file_path": name})
        result = await session.call("edit_files", {"edits": edits()})
        assert not result.is_error, result.text
        entries = await journal.entries()
    # No entry said a file changed while the set's directory fsync was still to come.
    assert committed_while_publishing == [0, 0, 0]
    assert sorted(entry.rel for entry in entries) == sorted(NAMES)


async def test_a_set_fsyncs_the_directory_its_files_share_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name in NAMES:
        (root / name).write_text("old\n", encoding="utf-8")
    info = root.stat()
    synced: list[tuple[int, int]] = []
    async with Workspace.local(root) as workspace:
        session = workspace.session()
        for name in NAMES:
            await session.call("read", {"file_path": name})
        spy_on_directory_fsync(monkeypatch, synced)
        result = await session.call("edit_files", {"edits": edits()})
        assert not result.is_error, result.text
    assert synced.count((info.st_dev, info.st_ino)) == 1  # not one per file
    assert [(root / name).read_text(encoding="utf-8") for name in NAMES] == ["new\n"] * 3


async def test_a_set_that_ended_leaves_no_record_nor_kept_file_once_the_workspace_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files of 8 KiB or more are kept as links while the set runs; the links go after the
    # call answered, in a helper thread the workspace's close waits for.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "root"
    root.mkdir()
    for name in NAMES:
        (root / name).write_text("old\n" + "x" * 10_000 + "\n", encoding="utf-8")
    kept_while_running: list[str] = []
    async with Workspace.local(root) as workspace:
        session = workspace.session()
        for name in NAMES:
            await session.call("read", {"file_path": name})
        write_text = LocalFileSystem.write_text

        async def spying(self: LocalFileSystem, *args: Any, **kwargs: Any) -> Any:
            kept_while_running.extend(
                path.suffix for path in (tmp_path / "state").rglob("*") if path.is_file()
            )
            return await write_text(self, *args, **kwargs)

        monkeypatch.setattr(LocalFileSystem, "write_text", spying)
        result = await session.call("edit_files", {"edits": edits()})
        assert not result.is_error, result.text
    assert kept_while_running.count(".kept") == 3 * len(NAMES)  # three, at each write
    assert [path for path in (tmp_path / "state").rglob("*") if path.is_file()] == []
    assert [(root / name).read_text(encoding="utf-8")[:4] for name in NAMES] == ["new\n"] * 3
