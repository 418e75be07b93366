"""Revert by hunk (SPEC §9.1): `undo(ids=[id], hunks=[n])` and `merge=True` take a text
change back hunk by hunk from a file that changed since; a hunk is reverted only where the
lines the change wrote are still exactly there with 3 lines of context, found once."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.journal import Journal

pytestmark = pytest.mark.anyio


def _numbered(count: int, end: str = "\n") -> list[str]:
    return [f"line {n}{end}" for n in range(1, count + 1)]


async def _changed(root: Path, ws: Workspace, before: str, after: str) -> str:
    """`before` on disk, the agent writes `after`; the entry's id."""
    (root / "f.txt").write_bytes(before.encode())
    s = ws.session(label="agent")
    await s.call("read", {"file_path": "f.txt"})
    result = await s.call("write", {"file_path": "f.txt", "content": after})
    assert not result.is_error, result.text
    assert ws.journal is not None
    return (await ws.journal.entries())[0].id


def _journal(ws: Workspace) -> Journal:
    assert ws.journal is not None
    return ws.journal


async def test_a_hunk_whose_context_the_user_edited_is_kept_and_the_other_reverted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(40)
    changed = list(lines)
    changed[9] = "TEN\n"  # hunk 1
    changed[29] = "THIRTY\n"  # hunk 2
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, "".join(lines), "".join(changed))
        diff = await _journal(ws).diff(entry_id)
        assert diff.count("\n@@ ") == 2
        user = list(changed)
        user[8] = "nine, by the user\n"  # context of hunk 1
        (root / "f.txt").write_text("".join(user))
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert result.result == "undone"
        assert result.hunks is not None
        assert [h.to_json() for h in result.hunks] == [
            {"n": 1, "result": "refused", "reason": "line 9 changed since; this hunk was kept"},
            {"n": 2, "result": "reverted", "reason": None},
        ]
        expected = list(user)
        expected[29] = "line 30\n"
        assert (root / "f.txt").read_text() == "".join(expected)
        newest = (await _journal(ws).entries())[0]
        assert (newest.tool, newest.undoes) == ("undo-hunks", entry_id)
        # A redo by id puts the hunk back.
        (redo,) = await _journal(ws).undo(ids=[newest.id])
        assert redo.result == "undone"
        assert (root / "f.txt").read_text() == "".join(user)


async def test_a_hunk_moved_by_lines_inserted_above_is_found_and_reverted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(30)
    changed = list(lines)
    changed[14:15] = ["fifteen\n", "and more\n"]
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, "".join(lines), "".join(changed))
        (root / "f.txt").write_text("# header\n# by the user\n" + "".join(changed))
        (result,) = await _journal(ws).undo(ids=[entry_id], hunks=[1])
        assert result.result == "undone"
    assert (root / "f.txt").read_text() == "# header\n# by the user\n" + "".join(lines)


async def test_a_hunk_at_the_files_start_needs_the_start_and_one_at_its_end_the_end(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(20)
    changed = ["first!\n", *lines[1:19], "last!\n"]
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, "".join(lines), "".join(changed))
        (root / "f.txt").write_text("".join([*changed, "appended\n"]))
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True, dry_run=True)
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(1, "reverted"), (2, "refused")]
        assert result.hunks[1].reason == (
            "the file no longer ends after line 20; this hunk was kept"
        )
        assert (root / "f.txt").read_text() == "".join([*changed, "appended\n"])  # dry run
        (root / "f.txt").write_text("".join(["prepended\n", *changed]))
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(1, "refused"), (2, "reverted")]
        assert result.hunks[0].reason == "line 1 changed since; this hunk was kept"
    assert (root / "f.txt").read_text() == "".join(["prepended\n", *changed[:-1], "line 20\n"])


async def test_a_crlf_file_without_a_final_newline_keeps_its_line_ends(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(12, "\r\n")
    before = "".join(lines) + "tail"
    after = "".join(lines[:5]) + "SIX\r\n" + "".join(lines[6:]) + "TAIL"
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, before, after)
        user = after.replace("line 1\r\n", "line one\r\n")
        (root / "f.txt").write_bytes(user.encode())
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(1, "reverted")]
    assert (root / "f.txt").read_bytes() == before.replace("line 1\r\n", "line one\r\n").encode()


async def test_a_file_reformatted_everywhere_keeps_every_hunk_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(10)
    changed = [*lines[:4], "five\n", *lines[5:]]
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, "".join(lines), "".join(changed))
        (root / "f.txt").write_text("".join(changed).upper())
        (result,) = await _journal(ws).undo(ids=[entry_id], hunks=[1])
        assert result.result == "refused"
        assert result.reason == "no hunk could be reverted"
        assert len(await _journal(ws).entries()) == 1
        with pytest.raises(ValueError, match="has 1 hunk; no hunk 2"):
            await _journal(ws).undo(ids=[entry_id], hunks=[2])
        with pytest.raises(ValueError, match="names one change"):
            await _journal(ws).undo(session="agent", merge=True)


async def test_a_hunk_whose_lines_appear_twice_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(10)
    changed = [*lines[:4], "five\n", *lines[5:]]
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _changed(root, ws, "".join(lines), "".join(changed))
        block = "".join(changed[1:8])
        (root / "f.txt").write_text("".join(changed) + "copy:\n" + block)
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert result.hunks is not None
        assert result.hunks[0].reason == "its lines are found 2 times now; this hunk was kept"


async def test_a_revert_by_hunk_never_lets_an_older_change_undo_past_the_users_edits(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(30)
    first = [*lines[:2], "THREE\n", *lines[3:]]
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        older = await _changed(root, ws, "".join(lines), "".join(first))
        second = [*first[:20], "TWENTY-ONE\n", *first[21:]]
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.txt"})
        await s.call("write", {"file_path": "f.txt", "content": "".join(second)})
        newer = (await _journal(ws).entries())[0].id
        user = [*second[:10], "the user's line\n", *second[10:]]
        (root / "f.txt").write_text("".join(user))
        (result,) = await _journal(ws).undo(ids=[newer], merge=True)
        assert result.result == "undone"
        assert (await _journal(ws).entries())[0].tool == "undo-hunks"
        results = await _journal(ws).undo(session="agent")
        assert [(r.id, r.result) for r in results] == [(older, "refused")]
        assert "the user's line\n" in (root / "f.txt").read_text()


def test_the_blocking_facade_reverts_by_hunk_too(tmp_path: Path) -> None:
    from dsh_fs.adapters import SyncWorkspace

    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(10)
    (root / "f.txt").write_text("".join(lines))
    with SyncWorkspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="sync")
        s.call("read", {"file_path": "f.txt"})
        changed = "".join([*lines[:4], "five\n", *lines[5:]])
        assert not s.call("write", {"file_path": "f.txt", "content": changed}).is_error
        (entry,) = ws.journal.entries()
        (result,) = ws.journal.undo(ids=[entry.id], hunks=[1])
        assert result.hunks is not None
        assert [h.result for h in result.hunks] == ["reverted"]
    assert (root / "f.txt").read_text() == "".join(lines)


async def test_a_hunk_of_a_utf16_file_is_reverted_in_utf16_with_its_bom(tmp_path: Path) -> None:
    # SPEC §12: the journal diffs a UTF-16 file as its text; the revert writes that text
    # back through the provider, which keeps the file's codec and BOM (no second BOM).
    root = tmp_path / "root"
    root.mkdir()
    lines = _numbered(30)
    changed = list(lines)
    changed[4] = "five\n"  # hunk 1
    changed[24] = "twenty-five\n"  # hunk 2
    (root / "f.txt").write_bytes("".join(lines).encode("utf-16"))
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.txt"})
        result = await s.call("write", {"file_path": "f.txt", "content": "".join(changed)})
        assert not result.is_error, result.text
        assert (root / "f.txt").read_bytes() == "".join(changed).encode("utf-16")
        entry = (await _journal(ws).entries())[0]
        assert (entry.added, entry.removed) == (2, 2)
        assert "+twenty-five" in await _journal(ws).diff(entry.id)
        (undone,) = await _journal(ws).undo(ids=[entry.id], hunks=[2])
        assert undone.result == "undone"
        expected = list(changed)
        expected[24] = "line 25\n"
        assert (root / "f.txt").read_bytes() == "".join(expected).encode("utf-16")


async def test_small_hunks_in_a_file_of_repeated_lines_are_reverted_at_their_own_place(
    tmp_path: Path,
) -> None:
    # A large file of one repeated line holds a small hunk's block many times: it was
    # refused as "found 2 times now" even on the file exactly as the change left it, where
    # every hunk is at its own place. Once the file changed, "found once" locates a hunk.
    root = tmp_path / "root"
    root.mkdir()
    before = ["x\n"] * 3000
    after = list(before)
    after[999] = "y\n"
    after[1999] = "y\n"
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        change = await _changed(root, ws, "".join(before), "".join(after))
        (result,) = await _journal(ws).undo(ids=[change], merge=True, dry_run=True)
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(1, "reverted"), (2, "reverted")]
        (result,) = await _journal(ws).undo(ids=[change], hunks=[2])
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(2, "reverted")]
        # The script took hunk 2 as two lines replaced by "y" (any shortest script is
        # right where the lines are alike): its revert puts the two lines back.
        assert (root / "f.txt").read_text() == "".join([*after[:1999], "x\n", "x\n", *after[2000:]])
        # Changed since (hunk 2 reverted): hunk 1 is located by the "found once" rule, and
        # its "y" is the only one left.
        (result,) = await _journal(ws).undo(ids=[change], hunks=[1])
        assert result.hunks is not None
        assert [(h.n, h.result) for h in result.hunks] == [(1, "reverted")]
        assert (root / "f.txt").read_text() == "".join(before)
