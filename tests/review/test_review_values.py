"""The page's values without a server: a diff as numbered rows (both sides' line numbers,
hunks numbered as `dsh-fs diff` has them, chunks), sessions summed up newest first; a
reading of the stores is not reused past an action that ended while it ran."""

from __future__ import annotations

import difflib
from functools import partial
from pathlib import Path

import anyio
import pytest

from dsh_fs.fs import FsVersion, JournalEntry, JournalProblem
from dsh_fs.review import Review, ReviewSource
from dsh_fs.review._diff_view import CHUNK_ROWS, _rows, parse_diff
from dsh_fs.review._sessions import StoreSnapshot, session_changes, sessions
from dsh_fs.workspace import Workspace


def _diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f", "b/f"
    )
    return "".join(lines)


def test_rows_carry_the_line_numbers_of_both_sides() -> None:
    old = "".join(f"{n}\n" for n in range(1, 21))
    new = old.replace("\n3\n", "\nthree\n").replace("17\n", "17\nseventeen and a half\n")
    view = parse_diff(_diff(old, new))
    assert view.hunks == 2
    assert (view.old_name, view.new_name) == ("a/f", "b/f")
    removed = [row for row in view.rows if row.kind == "removed"]
    added = [row for row in view.rows if row.kind == "added"]
    assert [(r.text, r.old, r.new) for r in removed] == [("3", 3, None)]
    assert [(r.text, r.old, r.new) for r in added] == [
        ("three", None, 3),
        ("seventeen and a half", None, 18),
    ]
    last = [row for row in view.rows if row.kind == "context"][-1]
    assert (last.text, last.old, last.new) == ("20", 20, 21)
    assert [row.hunk for row in view.rows if row.kind == "hunk"] == [1, 2]


def test_a_create_numbers_its_lines_from_one() -> None:
    view = parse_diff(_diff("", "a\nb\n").replace("--- a/f", "--- /dev/null"))
    assert view.old_name == "/dev/null"
    assert [(row.new, row.text) for row in view.rows if row.kind == "added"] == [
        (1, "a"),
        (2, "b"),
    ]


def test_a_note_instead_of_a_diff_is_one_note_row() -> None:
    text = "--- a/f\n+++ b/f\n(the content after this change is no longer kept, or is not text)\n"
    view = parse_diff(text)
    assert view.hunks == 0
    assert [row.kind for row in view.rows] == ["note"]


def test_a_long_diff_is_cut_into_chunks() -> None:
    view = parse_diff(_diff("", "".join(f"{n}\n" for n in range(1000))))
    assert view.chunks == -(-len(view.rows) // CHUNK_ROWS)
    assert len(view.chunk(0)) == CHUNK_ROWS
    assert sum(len(view.chunk(n)) for n in range(view.chunks)) == len(view.rows)
    assert view.chunk(view.chunks) == ()


def _entry(n: int, session: str, **fields: object) -> JournalEntry:
    base: dict[str, object] = {
        "id": f"20260101T0000{n:02d}.000000Z-0000000{n % 10}",
        "time": f"2026-01-01T00:00:{n:02d}Z",
        "session": session,
        "tool": "write",
        "path": f"/r/f{n}.txt",
        "rel": f"f{n}.txt",
        "source": None,
        "before": None,
        "after": FsVersion(f"v{n}"),
        "added": 1,
        "removed": 0,
        "undoable": True,
        "undoes": None,
        "mode": None,
        "size": None,
    }
    base.update(fields)
    return JournalEntry(**base)  # type: ignore[arg-type]


def test_sessions_are_summed_up_newest_first_with_what_is_still_in_force() -> None:
    first = _entry(1, "a-1")
    entries = (
        first,
        _entry(2, "a-1", rel="f1.txt", added=3, removed=2),
        _entry(3, "b-2"),
        _entry(4, "review-3", tool="undo", undoes=first.id, added=0, removed=1),
    )
    snapshot = StoreSnapshot(index=0, root="/r", location="/s", entries=entries, problems=())
    summaries = sessions([snapshot])
    assert [s.label for s in summaries] == ["review-3", "b-2", "a-1"]
    a = summaries[2]
    assert (a.changes, a.files, a.added, a.removed, a.in_force) == (2, 1, 4, 2, 1)
    changes = session_changes(snapshot, "a-1")
    assert changes[0].undone_by == entries[3]
    assert changes[1].undone_by is None


def test_chunks_made_one_at_a_time_number_their_rows_as_the_whole_diff_does() -> None:
    old = "".join(f"{n}\n" for n in range(3000))
    new = old.replace("10\n", "ten\n").replace("1500\n", "x\ny\n").replace("2999\n", "")
    text = _diff(old, new) + "".join(_diff("", "".join(f"{n}\n" for n in range(900))))
    view = parse_diff(text)
    assert view.chunks > 1
    whole = _rows(view.lines, 0, 0, 0)
    assert tuple(row for n in range(view.chunks) for row in view.chunk(n)) == whole
    assert [row.hunk for row in whole if row.kind == "hunk"] == list(range(1, view.hunks + 1))


@pytest.mark.anyio
async def test_a_reading_that_ran_while_an_action_ended_is_not_reused_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    async with Workspace.sandbox(str(root), journal=str(tmp_path / "journal")) as workspace:
        journal = workspace.journal
        assert journal is not None
        agent = workspace.session(label="agent")
        assert not (await agent.call("write", {"file_path": "a.txt", "content": "x\n"})).is_error
        review = Review([ReviewSource(root=str(root), journal=journal)])
        (entry,) = (await review.snapshots())[0].entries
        read, has_read, resume = journal.read, anyio.Event(), anyio.Event()

        async def poll_read() -> tuple[list[JournalEntry], list[JournalProblem]]:
            # A tab's poll reads the store before the action writes, and ends after it.
            entries = await read()
            has_read.set()
            await resume.wait()
            return entries

        async with anyio.create_task_group() as tasks:
            with monkeypatch.context() as patched:
                patched.setattr(journal, "read", poll_read)
                tasks.start_soon(partial(review.snapshots, fresh=True))
                with anyio.fail_after(60):
                    await has_read.wait()
            done = await review.act("undo-change", 0, {"id": entry.id})
            assert done["message"].startswith("1 of 1 undone"), done
            resume.set()
        after = (await review.snapshots())[0].entries
    assert [change.undoes for change in after if change.undoes is not None] == [entry.id]
