"""Selections over chains of changes and undos (SPEC §9, §9.1), from a red team's findings:
a dry run judges each change as the real run would (it exits as the real undo would); an
undo that put a file back, a redo, then a later change and its undo are followed end to
end; a move's undo exposes the source's older change and the file it replaced; a selection
run twice changes nothing the second time."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Session, Workspace
from dsh_fs.journal import parse_since

pytestmark = pytest.mark.anyio


async def _ok(s: Session, tool: str, **args: str) -> None:
    result = await s.call(tool, args)
    assert not result.is_error, result.text


async def _write(s: Session, path: str, content: str) -> None:
    await s.call("read", {"file_path": path})
    await _ok(s, "write", file_path=path, content=content)


async def test_a_dry_run_of_two_edits_of_one_file_says_what_the_real_run_does(
    tmp_path: Path,
) -> None:
    """The dry run refused the older edit ("changed since, by" the newer one), where the
    real run undoes both."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "app.py").write_text("a = 1\nb = 2\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await agent.call("read", {"file_path": "app.py"})
        await _ok(agent, "edit", file_path="app.py", old_string="a = 1", new_string="a = 10")
        await _ok(agent, "edit", file_path="app.py", old_string="b = 2", new_string="b = 20")
        dry = await ws.journal.undo(session="agent", dry_run=True)
        assert (root / "app.py").read_text() == "a = 10\nb = 20\n"  # nothing changed
        real = await ws.journal.undo(session="agent")
        assert [(r.id, r.result, r.reason) for r in dry] == [
            (r.id, r.result, r.reason) for r in real
        ]
        assert [r.result for r in real] == ["undone", "undone"]
    assert (root / "app.py").read_text() == "a = 1\nb = 2\n"


async def test_a_dry_run_over_a_create_then_a_delete_then_a_create_agrees(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "f.txt", "one\n")
        await _ok(agent, "delete", file_path="f.txt")
        await _write(agent, "f.txt", "two\n")
        dry = [(r.result, r.reason) for r in await ws.journal.undo(since="1h", dry_run=True)]
        real = [(r.result, r.reason) for r in await ws.journal.undo(since="1h")]
        assert dry == real == [("undone", None)] * 3
    assert not (root / "f.txt").exists()


async def test_a_change_redone_then_changed_again_undoes_to_its_origin(tmp_path: Path) -> None:
    """write X; the user undoes X and redoes it (an undo of the undo); the agent writes Y;
    undoing the agent's session undoes Y, then X (X was refused as "changed since")."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_text("original\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "f.txt", "X\n")
        (x,) = await ws.journal.entries()
        (undo,) = await ws.journal.undo(ids=[x.id], label="user")
        assert undo.result == "undone"
        newest = (await ws.journal.entries())[0]  # newest first: the undo
        (redo,) = await ws.journal.undo(ids=[newest.id], label="user")
        assert redo.result == "undone"
        assert (root / "f.txt").read_text() == "X\n"
        await _write(agent, "f.txt", "Y\n")
        for dry_run in (True, False):
            results = await ws.journal.undo(session="agent", dry_run=dry_run)
            assert [(r.result, r.reason) for r in results] == [("undone", None)] * 2
        assert (root / "f.txt").read_text() == "original\n"
        assert await ws.journal.undo(session="agent") == []


async def test_a_redone_move_can_be_undone_again(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("A\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await agent.call("read", {"file_path": "a.txt"})
        await _ok(agent, "move", source_path="a.txt", destination_path="b.txt")
        (move,) = await ws.journal.entries()
        assert [r.result for r in await ws.journal.undo(ids=[move.id], label="user")] == ["undone"]
        undo = (await ws.journal.entries())[0]  # newest first
        assert [r.result for r in await ws.journal.undo(ids=[undo.id], label="user")] == ["undone"]
        assert (root / "b.txt").read_text() == "A\n"
        for dry_run in (True, False):
            results = await ws.journal.undo(session="agent", dry_run=dry_run)
            assert [(r.id, r.result, r.reason) for r in results] == [(move.id, "undone", None)]
    assert (root / "a.txt").read_text() == "A\n"
    assert not (root / "b.txt").exists()


async def test_a_move_onto_a_file_the_agent_made_undoes_whole_in_one_run(
    tmp_path: Path,
) -> None:
    """create g, write f, move f onto g: the first run left g (its create refused as
    changed "then outside" the journal) and the second run deleted it."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_text("f original\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "g.txt", "g made\n")
        await _write(agent, "f.txt", "f written\n")
        await _ok(agent, "move", source_path="f.txt", destination_path="g.txt")
        dry = [(r.result, r.reason) for r in await ws.journal.undo(session="agent", dry_run=True)]
        real = [(r.result, r.reason) for r in await ws.journal.undo(session="agent")]
        assert dry == real == [("undone", None)] * 3
        assert await ws.journal.undo(session="agent") == []
    assert (root / "f.txt").read_text() == "f original\n"
    assert not (root / "g.txt").exists()


@pytest.mark.parametrize(
    "since", ["1000000d", "99999999999d", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]
)
def test_a_since_outside_the_calendar_is_a_usage_error_not_a_traceback(since: str) -> None:
    with pytest.raises(ValueError, match="outside the years 1 to 9999"):
        parse_since(since)


async def test_a_change_whose_file_a_later_change_moved_away_says_so(tmp_path: Path) -> None:
    """Not "then outside it": nothing happened outside the journal."""
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", "A\n")
        await _ok(agent, "move", source_path="a.txt", destination_path="b.txt")
        move, write = await ws.journal.entries()
        (result,) = await ws.journal.undo(ids=[write.id])
    assert result.result == "refused"
    assert result.reason == (
        f"the file is gone (moved to {root / 'b.txt'} by {move.session}, entry {move.id})"
    )


async def test_a_create_is_not_reverted_by_hunk(tmp_path: Path) -> None:
    """`--merge` of a create reverted its one hunk and left an empty file that no undo
    could remove after (already undone); it is refused, and undone whole."""
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        await _write(ws.session(label="agent"), "new.txt", "made\n")
        (create,) = await ws.journal.entries()
        (merged,) = await ws.journal.undo(ids=[create.id], merge=True)
        assert (merged.result, merged.reason) == ("refused", "it created the file; undo it whole")
        assert (root / "new.txt").read_text() == "made\n"
        assert [r.result for r in await ws.journal.undo(ids=[create.id])] == ["undone"]
    assert not (root / "new.txt").exists()


async def test_the_diff_of_a_file_move_says_it_moved(tmp_path: Path) -> None:
    """It read as a file created from nothing (``--- /dev/null``, every line added)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("A\n")
    (root / "c.txt").write_text("C\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        for name in ("a.txt", "c.txt"):
            await agent.call("read", {"file_path": name})
        await _ok(agent, "move", source_path="a.txt", destination_path="b.txt")
        await agent.call("read", {"file_path": "b.txt"})
        await _ok(agent, "move", source_path="c.txt", destination_path="b.txt")
        over, free = await ws.journal.entries()
        assert await ws.journal.diff(free.id) == (
            f"--- /dev/null\n+++ b/b.txt\n(a file moved from {root / 'a.txt'}: its content "
            "unchanged)\n"
        )
        assert await ws.journal.diff(over.id) == (
            f"(a file moved from {root / 'c.txt'}, over the file there)\n"
            "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-A\n+C\n"
        )
