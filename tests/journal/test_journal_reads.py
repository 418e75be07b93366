"""An undo loads the store once (issue 35): the CLI's `undo` and the library's selections,
change sets and refusals decide everything from one reading of the store, never a second
reading per refusal, per entry or per step."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import anyio
import pytest

from dsh_fs import Session, Workspace
from dsh_fs.cli import main
from dsh_fs.fs import JournalEntry
from dsh_fs.journal import JournalConfig
from dsh_fs.providers import LocalJournalStore

_LISTED: Counter[str] = Counter()
"""How often each store (by location) was read whole during a test."""


@pytest.fixture(autouse=True)
def _counted(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = LocalJournalStore.entries

    def counted(self: LocalJournalStore) -> object:
        _LISTED[self.location] += 1
        return entries(self)

    _LISTED.clear()
    monkeypatch.setattr(LocalJournalStore, "entries", counted)


async def _write(s: Session, path: str, content: str) -> None:
    await s.call("read", {"file_path": path})
    result = await s.call("write", {"file_path": path, "content": content})
    assert not result.is_error, result.text


async def _history(root: Path, store: Path) -> list[JournalEntry]:
    """Five changes by an agent (the last two a change set); then a.txt and c.txt changed
    outside, so undoing the agent's changes of them is refused. The entries, newest
    first."""
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        for name in ("a.txt", "b.txt", "c.txt"):
            await _write(agent, name, f"{name} by the agent\n")
        edits = [
            {"file_path": name, "old_string": "agent", "new_string": "agent, twice"}
            for name in ("b.txt", "c.txt")
        ]
        assert not (await agent.call("edit_files", {"edits": edits})).is_error
        entries = await ws.journal.entries()
    (root / "a.txt").write_text("the user's\n")
    (root / "c.txt").write_text("the user's\n")
    return entries


def test_a_cli_undo_of_a_selection_reads_the_store_once_whatever_it_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    anyio.run(_history, root, store)
    _LISTED.clear()
    status = main(["undo", str(root), "--journal", str(store), "--since", "1d"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert out.count("refused") == 3, out  # a.txt's write, c.txt's write and edit
    assert out.count("undone") == 2, out  # b.txt's edit, then its write
    assert list(_LISTED.values()) == [1]
    assert not (root / "b.txt").exists()


def test_a_cli_undo_of_ids_and_of_a_change_set_reads_the_store_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    entries = anyio.run(_history, root, store)
    a_write, b_write = entries[-1], entries[-2]
    assert Path(a_write.path).name == "a.txt"
    _LISTED.clear()
    # Two ids (one by a short prefix), both refused: a.txt changed outside, b.txt by the set.
    status = main(["undo", str(root), "--journal", str(store), a_write.id[:22], b_write.id])
    assert status == 1
    assert capsys.readouterr().out.count("refused") == 2
    assert list(_LISTED.values()) == [1]
    group = entries[0].group
    assert group is not None
    _LISTED.clear()
    # The set is tried whole first (c.txt changed since: it is refused), then reported.
    status = main(["undo", str(root), "--journal", str(store), group])
    assert status == 1
    assert "the change set is refused" in capsys.readouterr().out
    assert list(_LISTED.values()) == [1]


@pytest.mark.anyio
async def test_a_library_selection_reads_the_store_once(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    await _history(root, store)
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        _LISTED.clear()
        results = await ws.journal.undo(session="agent")
        assert sorted(r.result for r in results) == ["refused"] * 3 + ["undone"] * 2
        assert list(_LISTED.values()) == [1]
    assert sorted(os.listdir(root)) == ["a.txt", "c.txt"]


@pytest.mark.anyio
async def test_opening_a_store_reads_its_records_only_when_a_bound_is_exceeded(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    await _history(root, store)
    _LISTED.clear()
    async with Workspace.sandbox(root, journal=store) as ws:  # within its bounds
        assert ws.journal is not None
        assert list(_LISTED.values()) == []  # the listing's sizes and names told
    config = JournalConfig(location=str(store), max_bytes=1)
    async with Workspace.sandbox(root, journal=config) as ws:  # over: it prunes at once
        assert ws.journal is not None
        assert list(_LISTED.values()) == [1]
        assert not any(entry.undoable for entry in await ws.journal.entries())
