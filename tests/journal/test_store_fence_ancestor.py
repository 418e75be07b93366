"""A directory that holds a fenced place can't be moved or removed by a tool (SPEC §9.1: the
store is never reachable): a red team moved ``.local`` (which held the default store) to
another name, where no fence named it, then listed, read and deleted the pre-images and
records (the user's undo history gone), and planted a change set's record that the next
start applied to a protected file. Real disk, real workspaces."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from dsh_fs import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A served folder that holds ``$XDG_STATE_HOME`` (`dsh-fs mcp ~`)."""
    home = (tmp_path / "home").resolve()
    (home / ".local" / "state").mkdir(parents=True)
    (home / "notes.txt").write_text("the user's notes\n", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    return home


def _kept(home: Path) -> list[Path]:
    store = home / ".local" / "state" / "dsh-fs" / "journal"
    return sorted(p for p in store.rglob("*") if p.suffix in (".json", ".pre"))


@pytest.mark.parametrize("mode", ["workspace-write", "full-access"])
async def test_a_folder_holding_the_journal_store_is_never_moved(
    home: Path, mode: Literal["workspace-write", "full-access"]
) -> None:
    async with Workspace.sandbox(home, mode=mode, journal=True) as ws:
        s = ws.session(label="model")
        assert not (await s.call("read", {"file_path": "notes.txt"})).is_error
        written = await s.call("write", {"file_path": "notes.txt", "content": "overwritten\n"})
        assert not written.is_error, written.text
        kept = _kept(home)
        assert kept
        for source in (".local", ".local/state", ".local/state/dsh-fs"):
            moved = await s.call("move", {"source_path": source, "destination_path": "carry"})
            assert moved.code == "FS_SANDBOX_DENIED", moved.text
            assert "it holds the change journal's store, which no tool may reach" in moved.text
            assert not (home / "carry").exists()
        assert (await s.call("glob", {"pattern": "**/*.pre"})).text == "No files found"
        assert _kept(home) == kept
        # Everything else under the same folder stays the model's to move.
        (home / ".local" / "bin").mkdir()
        moved = await s.call("move", {"source_path": ".local/bin", "destination_path": "bin"})
        assert not moved.is_error, moved.text
        assert ws.journal is not None
        assert [r.result for r in await ws.journal.undo(session="model")] == ["undone", "undone"]
    assert (home / "notes.txt").read_text(encoding="utf-8") == "the user's notes\n"


async def test_a_folder_holding_the_change_set_records_is_never_moved(home: Path) -> None:
    """Without the journal: the change sets' intent records (a planted one is applied by
    the next start's recovery) are fenced out the same way."""
    (home / "a.txt").write_text("alpha\n", encoding="utf-8")
    async with Workspace.sandbox(home, journal=False) as ws:
        s = ws.session()
        assert not (await s.call("read", {"file_path": "a.txt"})).is_error
        one = {"file_path": "a.txt", "old_string": "alpha", "new_string": "A"}
        assert not (await s.call("edit_files", {"edits": [one]})).is_error
        records = home / ".local" / "state" / "dsh-fs" / "sets"
        assert records.is_dir()
        for source in (".local", str(records)):
            moved = await s.call("move", {"source_path": source, "destination_path": "carry"})
            assert moved.code == "FS_SANDBOX_DENIED", moved.text
            assert "it holds the change sets' intent records" in moved.text
        assert records.is_dir()
        assert not (home / "carry").exists()
