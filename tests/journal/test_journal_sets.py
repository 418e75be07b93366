"""Change sets in the journal (SPEC §13): each file of an `edit_files` call is one entry
carrying the set's `group`; undoing the group undoes every file, each guarded, all or none
(library and `dsh-fs undo ROOT GROUP_ID`), also against a writer between the trial and the
undo; `dsh-fs diff ROOT GROUP_ID` shows every file, `log` names the set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import Session, Workspace
from dsh_fs.fs import FileSystem, FsCapture, FsPreImage, FsTarget, FsVersion, WrapperFileSystem

pytestmark = pytest.mark.anyio

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
NAMES = ("a.py", "b.py", "c.py")


async def _rename(session: Session) -> str:
    """Read a.py, b.py, c.py and rename old_name in all three in one set; the set's id."""
    for name in NAMES:
        assert not (await session.call("read", {"file_path": name})).is_error
    edits = [{"file_path": n, "old_string": "old_name", "new_string": "new_name"} for n in NAMES]
    result = await session.call("edit_files", {"edits": edits})
    assert not result.is_error, result.text
    assert result.value is not None
    group = result.value["group"]
    assert isinstance(group, str)
    return group


def _tree(root: Path) -> None:
    root.mkdir()
    for name in NAMES:
        (root / name).write_text(f"{name}: old_name\n", encoding="utf-8")


def _contents(root: Path) -> list[str]:
    return [(root / name).read_text(encoding="utf-8") for name in NAMES]


async def test_each_file_of_a_set_is_an_entry_carrying_the_sets_group(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        group = await _rename(ws.session(label="agent"))
        entries = await ws.journal.entries()
    assert sorted(Path(entry.path).name for entry in entries) == list(NAMES)
    assert {entry.group for entry in entries} == {group}
    assert {entry.tool for entry in entries} == {"edit_files"}
    assert all(entry.to_json()["group"] == group for entry in entries)


async def test_undoing_the_group_puts_every_file_back(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root)
    before = _contents(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        group = await _rename(ws.session(label="agent"))
        results = await ws.journal.undo(ids=[group])
    assert [r.result for r in results] == ["undone"] * 3
    assert _contents(root) == before


async def test_a_set_with_one_file_changed_since_is_not_undone_at_all(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        await _rename(ws.session(label="agent"))
        group = (await ws.journal.entries())[0].group
        assert group is not None
        (root / "b.py").write_text("b.py: the user's own line\n", encoding="utf-8")
        after = _contents(root)
        results = await ws.journal.undo(ids=[group])
    assert [r.result for r in results] == ["refused"] * 3
    assert all("b.py" in r.path or "b.py" in (r.reason or "") for r in results)
    assert sum("the change set is refused" in (r.reason or "") for r in results) == 2
    assert _contents(root) == after


async def test_a_set_that_failed_midway_has_nothing_to_undo(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        session = ws.session(label="agent")
        for name in NAMES:
            await session.call("read", {"file_path": name})
        edits = [
            {"file_path": n, "old_string": "old_name", "new_string": "new_name"} for n in NAMES
        ]
        edits.append({"file_path": "c.py", "old_string": "missing", "new_string": "x"})
        failed = await session.call("edit_files", {"edits": edits})
        assert failed.code == "FS_EDIT_NOT_FOUND"
        assert await ws.journal.entries() == []


def test_dsh_fs_undo_root_group_id_undoes_the_set(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    _tree(root)
    before = _contents(root)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}

    async def change() -> str:
        async with Workspace.local(root, journal=store) as ws:
            return await _rename(ws.session(label="agent"))

    import anyio

    group = anyio.run(change)
    assert _contents(root) != before
    done = subprocess.run(
        [_DSH_FS, "undo", str(root), group, "--journal", str(store), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [item["result"] for item in json.loads(done.stdout)] == ["undone"] * 3
    assert _contents(root) == before


async def test_an_undo_of_a_set_cut_short_is_finished_by_undoing_the_set_again(
    tmp_path: Path,
) -> None:
    # A killed undo of a set left one file undone: the set's undo run again undoes the
    # others, rather than refusing the whole set for the one already undone.
    root = tmp_path / "root"
    _tree(root)
    before = _contents(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        group = await _rename(ws.session(label="agent"))
        first = (await ws.journal.entries())[-1]
        assert [r.result for r in await ws.journal.undo(ids=[first.id])] == ["undone"]
        results = await ws.journal.undo(ids=[group])
        assert [r.result for r in results] == ["undone"] * 2
        assert _contents(root) == before
        again = await ws.journal.undo(ids=[group])
    assert {r.result for r in again} == {"refused"}
    assert all((r.reason or "").startswith("already undone by ") for r in again)


def test_dsh_fs_diff_of_the_group_shows_every_file_and_log_names_the_set(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    _tree(root)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}

    async def change() -> str:
        async with Workspace.local(root, journal=store) as ws:
            return await _rename(ws.session(label="agent"))

    import anyio

    group = anyio.run(change)
    shown = subprocess.run(
        [_DSH_FS, "diff", str(root), group, "--journal", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert [line for line in shown.stdout.splitlines() if line.startswith(("---", "-", "+"))] == [
        line
        for name in NAMES
        for line in (f"--- a/{name}", f"+++ b/{name}", f"-{name}: old_name", f"+{name}: new_name")
    ]
    listed = subprocess.run(
        [_DSH_FS, "log", str(root), "--journal", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()[1:]
    assert len(lines) == 3
    assert all(line.endswith(f"  [set {group}]") for line in lines), lines


class WriterBeforeSecondRestore(WrapperFileSystem):
    """Changes `path` right before the second `restore`: after the set's trial undo found
    every file undoable, between the real undos."""

    def __init__(self, wrapped: FileSystem, path: Path) -> None:
        super().__init__(wrapped)
        self.path = path
        self.restores = 0

    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        self.restores += 1
        if self.restores == 2:
            self.path.write_text("theirs\n", encoding="utf-8")
        return await self.wrapped.restore(target, pre_image, expected, mode=mode, capture=capture)


async def test_a_writer_between_the_trial_and_the_undo_of_a_set_leaves_it_not_undone(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _tree(root)
    async with Workspace.local(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        group = await _rename(ws.session(label="agent"))
        after = _contents(root)
        # Undone newest first: c.py, then b.py (changed by the writer right before).
        ws.journal.fs = WriterBeforeSecondRestore(ws.journal.fs, root / "b.py")
        results = await ws.journal.undo(ids=[group])
    assert [r.result for r in results] == ["refused"] * 3
    assert results[1].path.endswith("b.py")
    assert all("the change set is refused" in str(r.reason) for r in (results[0], results[2]))
    # c.py, undone before the writer struck, is as the set left it again; b.py is theirs.
    assert _contents(root) == [after[0], "theirs\n", after[2]]
