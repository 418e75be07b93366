"""The change journal (SPEC §9) on every backend: each mutation path is recorded before it
is visible, and undo is guarded by the version each change left, checked against what
really is in storage (the backend's out-of-band view)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Session, Workspace

from .backends import ProviderUnderTest, journal_store, require

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ws(put: ProviderUnderTest, tmp_path: Path) -> AsyncIterator[Workspace]:
    workspace = Workspace(put.fs, cwd=put.base, journal_store=journal_store(put, tmp_path))
    try:
        yield workspace
    finally:
        await workspace.aclose()


async def _ok(session: Session, tool: str, args: dict[str, object], internal: bool = False) -> None:
    result = await session.call(tool, args, internal=internal)
    assert not result.is_error, result.text


async def test_every_mutation_path_is_recorded_and_undoes_to_the_exact_bytes(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"one\r\ntwo\r\n")
    put.outside.write_bytes("c.txt", b"kept\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
    await _ok(s, "insert", {"file_path": "a.txt", "insert_line": 0, "text": "zero"}, True)
    await _ok(s, "write", {"file_path": "b.txt", "content": "new\n"})
    await _ok(s, "delete_file", {"file_path": "b.txt"}, True)
    await _ok(s, "read", {"file_path": "c.txt"})
    await _ok(s, "delete", {"file_path": "c.txt"})
    entries = await ws.journal.entries()
    assert [e.tool for e in entries] == ["delete", "delete_file", "write", "insert", "edit"]
    assert [(e.added, e.removed) for e in entries] == [(0, 1), (0, 1), (1, 0), (1, 0), (1, 1)]
    assert all(e.undoable and e.session.startswith("agent-") for e in entries)
    assert put.outside.read_bytes("a.txt") == b"zero\r\none\r\n2\r\n"
    assert "+2\r\n" in await ws.journal.diff(entries[-1].id)
    results = await ws.journal.undo(session="agent")
    assert [r.result for r in results] == ["undone"] * 5
    assert put.outside.read_bytes("a.txt") == b"one\r\ntwo\r\n"
    assert put.outside.read_bytes("c.txt") == b"kept\n"
    assert not put.outside.exists("b.txt")
    after = await ws.journal.entries()
    assert [e.tool for e in after[:5]] == ["undo"] * 5
    assert {e.undoes for e in after[:5]} == {e.id for e in entries}


async def test_an_undo_over_a_newer_change_is_refused_and_nothing_of_it_changes(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "write", {"file_path": "a.txt", "content": "agent\n"})
    put.outside.write_bytes("a.txt", b"user's newer edit\n")
    assert [r.result for r in await ws.journal.undo(session="agent", dry_run=True)] == ["refused"]
    (result,) = await ws.journal.undo(session="agent")
    assert result.result == "refused"
    assert result.reason is not None
    assert "changed since" in result.reason
    assert put.outside.read_bytes("a.txt") == b"user's newer edit\n"
    assert [e.tool for e in await ws.journal.entries()] == ["write"]  # no entry for a refusal


async def test_an_undone_delete_never_comes_back_over_a_file_that_exists_now(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"old\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "delete", {"file_path": "a.txt"})
    put.outside.write_bytes("a.txt", b"someone else's\n")
    (result,) = await ws.journal.undo(session="agent")
    assert result.result == "refused"
    assert result.reason is not None
    assert "exists there now" in result.reason
    assert put.outside.read_bytes("a.txt") == b"someone else's\n"


async def test_an_undone_change_is_refused_twice_and_undoing_the_undo_redoes_it(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"before\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "write", {"file_path": "a.txt", "content": "after\n"})
    (change,) = await ws.journal.entries()
    assert [r.result for r in await ws.journal.undo(ids=[change.id])] == ["undone"]
    assert put.outside.read_bytes("a.txt") == b"before\n"
    (again,) = await ws.journal.undo(ids=[change.id])
    assert again.result == "refused"
    assert again.reason is not None
    assert "already undone" in again.reason
    undo_entry = (await ws.journal.entries())[0]
    assert [r.result for r in await ws.journal.undo(ids=[undo_entry.id])] == ["undone"]
    assert put.outside.read_bytes("a.txt") == b"after\n"


async def test_a_chain_of_edits_undoes_in_reverse_order_to_the_first_bytes(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"v0\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    for n in range(1, 4):
        await _ok(
            s, "edit", {"file_path": "a.txt", "old_string": f"v{n - 1}", "new_string": f"v{n}"}
        )
    assert [r.result for r in await ws.journal.undo(since="1h")] == ["undone"] * 3
    assert put.outside.read_bytes("a.txt") == b"v0\n"


async def test_pruning_keeps_the_entries_listed_but_not_undoable(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"x" * 1000)
    assert ws.journal is not None
    ws.journal.max_bytes = 10
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "write", {"file_path": "a.txt", "content": "y"})
    assert (await ws.journal.entries())[0].undoable
    assert await ws.journal.prune() == 1
    (entry,) = await ws.journal.entries()
    assert not entry.undoable
    assert (await ws.journal.undo(ids=[entry.id]))[0].result == "refused"
    assert put.outside.read_bytes("a.txt") == b"y"
    usage = await ws.journal.usage()
    assert (usage.entries, usage.pre_images) == (1, 0)


async def test_a_file_move_is_recorded_and_undo_moves_it_back(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"moved bytes\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "move", {"source_path": "a.txt", "destination_path": "sub/b.txt"})
    (entry,) = await ws.journal.entries()
    assert (entry.tool, entry.path, entry.source) == (
        "move",
        put.display("sub/b.txt"),
        put.display("a.txt"),
    )
    assert entry.before is None
    assert entry.after is not None
    (result,) = await ws.journal.undo(session="agent")
    assert result.result == "undone", result.reason
    assert put.outside.read_bytes("a.txt") == b"moved bytes\n"
    assert put.outside.read_bytes("sub/b.txt") is None
    undo_entry = (await ws.journal.entries())[0]
    assert (undo_entry.tool, undo_entry.undoes) == ("undo", entry.id)


async def test_a_move_over_a_file_undoes_to_both_files_and_refuses_over_a_new_source(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    put.outside.write_bytes("a.txt", b"mover\n")
    put.outside.write_bytes("b.txt", b"replaced\n")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "read", {"file_path": "a.txt"})
    await _ok(s, "read", {"file_path": "b.txt"})
    await _ok(s, "move", {"source_path": "a.txt", "destination_path": "b.txt"})
    (entry,) = await ws.journal.entries()
    assert entry.before is not None
    put.outside.write_bytes("a.txt", b"new at the source\n")
    (refused,) = await ws.journal.undo(ids=[entry.id])
    assert refused.result == "refused"
    assert refused.reason is not None
    assert "exists at" in refused.reason
    assert put.outside.read_bytes("b.txt") == b"mover\n"
    put.outside.remove("a.txt")
    (result,) = await ws.journal.undo(ids=[entry.id])
    assert result.result == "undone", result.reason
    assert put.outside.read_bytes("a.txt") == b"mover\n"
    assert put.outside.read_bytes("b.txt") == b"replaced\n"


async def test_a_write_then_a_move_undo_as_one_chain(put: ProviderUnderTest, ws: Workspace) -> None:
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "write", {"file_path": "a.txt", "content": "fresh\n"})
    await _ok(s, "move", {"source_path": "a.txt", "destination_path": "b.txt"})
    results = await ws.journal.undo(session="agent")
    assert [r.result for r in results] == ["undone", "undone"], results
    assert put.outside.read_bytes("a.txt") is None
    assert put.outside.read_bytes("b.txt") is None


async def test_a_made_directory_is_recorded_and_undo_removes_it_only_while_empty(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    require(put, "directories")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "mkdir", {"path": "made"})
    await _ok(s, "mkdir", {"path": "made"})  # already there: no entry
    (entry,) = await ws.journal.entries()
    assert (entry.tool, entry.path, entry.before, entry.directory) == (
        "mkdir",
        put.display("made"),
        None,
        True,
    )
    put.outside.write_bytes("made/user.txt", b"mine\n")
    (refused,) = await ws.journal.undo(ids=[entry.id])
    assert refused.result == "refused"
    assert put.outside.read_bytes("made/user.txt") == b"mine\n"
    assert [e.id for e in await ws.journal.entries()] == [entry.id]  # a refusal adds none


async def test_an_empty_made_directory_undoes_and_redoes(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    require(put, "directories")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "mkdir", {"path": "a/b"})
    (entry,) = await ws.journal.entries()
    assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert not put.outside.exists("a/b")
    assert put.outside.exists("a")  # parents made on the way are not separate entries
    undo_entry = (await ws.journal.entries())[0]
    assert [r.result for r in await ws.journal.undo(ids=[undo_entry.id])] == ["undone"]
    assert put.outside.exists("a/b")


async def test_an_empty_directorys_delete_is_recorded_and_undo_makes_it_again(
    put: ProviderUnderTest, ws: Workspace
) -> None:
    require(put, "directories")
    assert ws.journal is not None
    s = ws.session(label="agent")
    await _ok(s, "mkdir", {"path": "gone"})
    await _ok(s, "delete", {"file_path": "gone"})
    entry, made = await ws.journal.entries()
    assert (entry.tool, entry.directory, entry.after, entry.undoable) == (
        "delete",
        True,
        None,
        True,
    )
    assert not put.outside.exists("gone")
    assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert put.outside.exists("gone")
    # The whole run (SPEC §9.1): the undone delete is skipped, the mkdir undone (the
    # directory made again is removed again).
    put.outside.write_bytes("other.txt", b"untouched\n")
    results = await ws.journal.undo(session="agent")
    assert [(r.id, r.result) for r in results] == [(made.id, "undone")]
    assert not put.outside.exists("gone")
    assert put.outside.read_bytes("other.txt") == b"untouched\n"
