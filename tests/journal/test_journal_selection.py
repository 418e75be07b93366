"""Undo by selection (SPEC §9.1): `--session` and `--since` put each selected file back as it
was before the earliest selected change still in force, skip undo entries and changes
already undone, and find nothing the second time; only an explicit id undoes an undo."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs import Session, Workspace
from dsh_fs.fs import JournalEntry


async def _write(s: Session, path: str, content: str) -> None:
    await s.call("read", {"file_path": path})
    result = await s.call("write", {"file_path": path, "content": content})
    assert not result.is_error, result


@pytest.mark.anyio
async def test_a_selection_never_undoes_the_users_own_undo_of_a_delete(tmp_path: Path) -> None:
    # The finding: `undo --since 1h` re-deleted a file the user had restored, then refused
    # the agent's delete as already undone.
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("keep me\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await agent.call("read", {"file_path": "a.txt"})
        assert not (await agent.call("delete_file", {"file_path": "a.txt"}, internal=True)).is_error
        (delete,) = await ws.journal.entries()
        assert [r.result for r in await ws.journal.undo(ids=[delete.id], label="user")] == [
            "undone"
        ]
        assert (root / "a.txt").read_text() == "keep me\n"
        assert await ws.journal.undo(since="1h") == []
        assert (root / "a.txt").read_text() == "keep me\n"
        assert await ws.journal.undo(session="user") == []
        assert len(await ws.journal.entries()) == 2  # nothing new was journaled


@pytest.mark.anyio
async def test_the_same_selection_run_twice_changes_nothing_the_second_time(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a0\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", "a1\n")
        await _write(agent, "a.txt", "a2\n")
        await _write(agent, "b.txt", "b1\n")
        first = await ws.journal.undo(session="agent")
        assert [r.result for r in first] == ["undone"] * 3
        assert (root / "a.txt").read_text() == "a0\n"
        assert not (root / "b.txt").exists()
        entries = await ws.journal.entries()
        assert await ws.journal.undo(session="agent") == []
        assert await ws.journal.undo(since="1h") == []
        assert await ws.journal.entries() == entries
        assert (root / "a.txt").read_text() == "a0\n"


@pytest.mark.anyio
async def test_a_selection_skips_what_another_session_undid_and_undoes_the_rest(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("x\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", "y\n")
        await _write(agent, "a.txt", "z\n")
        newest = (await ws.journal.entries())[0]
        assert [r.result for r in await ws.journal.undo(ids=[newest.id], label="user")] == [
            "undone"
        ]
        results = await ws.journal.undo(session="agent")
        assert [(r.result, r.id == newest.id) for r in results] == [("undone", False)]
        assert (root / "a.txt").read_text() == "x\n"


@pytest.mark.anyio
async def test_only_an_explicit_id_redoes_and_a_redone_change_is_in_force_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", "made\n")
        (write,) = await ws.journal.entries()
        await ws.journal.undo(ids=[write.id], label="user")
        undo = (await ws.journal.entries())[0]
        assert undo.undoes == write.id
        assert await ws.journal.undo(session="user") == []  # an undo is never selected
        assert not (root / "a.txt").exists()
        (redo,) = await ws.journal.undo(ids=[undo.id], label="user")
        assert redo.result == "undone"
        assert (root / "a.txt").read_text() == "made\n"
        # The write is in force again: the agent's selection takes it back.
        assert [r.result for r in await ws.journal.undo(session="agent")] == ["undone"]
        assert not (root / "a.txt").exists()
        (again,) = await ws.journal.undo(ids=[write.id])
        assert again.result == "refused"
        assert again.reason is not None
        assert again.reason.startswith("already undone by ")


# The property: random histories of changes, undos, redos and reverts by hunk by several
# sessions, and edits outside the journal; then one selection. After it, each selected file
# is as it was before the earliest selected change in force, or something of it was refused;
# no undo entry was undone; the same selection again changes nothing.

_FILES = ("a.txt", "b.txt")
_SESSIONS = ("agent", "other")

_step = st.one_of(
    st.tuples(
        st.just("write"), st.sampled_from(_SESSIONS), st.sampled_from(_FILES), st.integers(0, 3)
    ),
    st.tuples(st.just("delete"), st.sampled_from(_SESSIONS), st.sampled_from(_FILES)),
    st.tuples(st.just("undo"), st.integers(0, 30)),
    st.tuples(st.just("merge"), st.integers(0, 30)),
    st.tuples(st.just("hunk"), st.integers(0, 30), st.integers(1, 2)),
    st.tuples(st.just("outside"), st.sampled_from(_FILES), st.integers(0, 3)),
)


def _in_force(entries: list[JournalEntry]) -> set[str]:
    """The ids of the changes no undo in force reverted whole, and whose hunks the reverts
    by hunk in force did not all take back (newest first: an undo is newer than what it
    reverts)."""
    undoers: dict[str, list[JournalEntry]] = {}
    for entry in entries:
        if entry.undoes is not None:
            undoers.setdefault(entry.undoes, []).append(entry)
    force: set[str] = set()
    for entry in sorted(entries, key=lambda e: e.id, reverse=True):
        reverts = [u for u in undoers.get(entry.id, []) if u.id in force]
        whole = [u for u in reverts if u.hunks is None]
        taken = {n for u in reverts for n in u.hunks or ()}
        count = max((u.hunk_count or 0 for u in reverts if u.hunks is not None), default=0)
        if not whole and not (taken and len(taken) >= count):
            force.add(entry.id)
    return force


def _content(who: str, n: int) -> str:
    """A write's content: four sizes, the largest with two hunks against another writer's
    (its lines 1 and 14 are the writer's own, the twelve between shared)."""
    if n == 3:
        return "".join(f"{who}{n} {k}\n" if k in (1, 14) else f"line {k}\n" for k in range(16))
    return "".join(f"{who}{n} line {k}\n" for k in range(n * 4))


def _state(root: Path) -> dict[str, bytes | None]:
    return {f: (root / f).read_bytes() if (root / f).exists() else None for f in _FILES}


async def _history(root: Path, store: Path, steps: list[tuple[object, ...]], pick: str) -> None:
    before: dict[str, bytes | None] = {}  # each entry's file as it was before the entry
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = ws.journal
        assert journal is not None
        sessions = {name: ws.session(label=name) for name in _SESSIONS}
        for step in steps:
            state = _state(root)
            if step[0] == "write":
                _, who, path, n = step
                assert isinstance(who, str)
                assert isinstance(path, str)
                assert isinstance(n, int)
                await sessions[who].call("read", {"file_path": path})
                content = _content(who, n)
                await sessions[who].call("write", {"file_path": path, "content": content})
            elif step[0] == "delete":
                _, who, path = step
                assert isinstance(who, str)
                assert isinstance(path, str)
                await sessions[who].call("read", {"file_path": path})
                await sessions[who].call("delete_file", {"file_path": path}, internal=True)
            elif step[0] in ("undo", "merge"):
                entries = await journal.entries()
                if entries:
                    index = step[1]
                    assert isinstance(index, int)
                    await journal.undo(
                        ids=[entries[index % len(entries)].id],
                        label="other",
                        merge=step[0] == "merge",
                    )
            elif step[0] == "hunk":
                entries = await journal.entries()
                if entries:
                    _, index, n = step
                    assert isinstance(index, int)
                    assert isinstance(n, int)
                    with contextlib.suppress(ValueError):  # the change has fewer hunks
                        await journal.undo(
                            ids=[entries[index % len(entries)].id], label="other", hunks=[n]
                        )
            else:
                _, path, n = step
                assert isinstance(n, int)
                (root / str(path)).write_text(f"outside{n}\n" * (n + 1))
            for entry in await journal.entries():
                if entry.id not in before:
                    before[entry.id] = state[entry.rel]
        entries = await journal.entries()
        force = _in_force(entries)
        selected = [
            e
            for e in entries
            if e.session.startswith(pick + "-") and e.undoes is None and e.id in force
        ]
        results = await journal.undo(session=pick)
        assert {r.id for r in results} == {e.id for e in selected}
        after = _state(root)
        for path in _FILES:
            mine = sorted((e for e in selected if e.rel == path), key=lambda e: e.id)
            if not mine:
                continue
            refused = [
                r
                for r in results
                if r.path.endswith("/" + path)
                and (r.result == "refused" or any(h.result == "refused" for h in r.hunks or ()))
            ]
            assert refused or after[path] == before[mine[0].id], (path, results)
        entries_now = await journal.entries()
        again = await journal.undo(session=pick)
        assert all(r.result == "refused" for r in again)
        assert _state(root) == after
        assert await journal.entries() == entries_now


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(_step, min_size=1, max_size=12),
    pick=st.sampled_from(_SESSIONS),
)
def test_a_selection_after_any_history_puts_files_back_or_refuses_and_never_reapplies(
    steps: list[tuple[object, ...]], pick: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root, store = Path(folder) / "root", Path(folder) / "store"
        root.mkdir()
        (root / "a.txt").write_text("start\n")
        anyio.run(_history, root, store, steps, pick)


@pytest.mark.anyio
async def test_a_selection_takes_back_the_hunks_a_partial_revert_left_and_never_the_reverted(
    tmp_path: Path,
) -> None:
    # Issue 36: a revert of hunk 1 counted the whole change as undone, so `--since` then
    # skipped it and hunk 2 stayed; and undoing the revert's own entry put hunk 1 back.
    root = tmp_path / "root"
    root.mkdir()
    start = "".join(f"line {k}\n" for k in range(16))
    (root / "a.txt").write_text(start)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", start.replace("line 1\n", "one\n").replace("line 14", "14"))
        (change,) = await ws.journal.entries()
        (first,) = await ws.journal.undo(ids=[change.id], hunks=[1], label="user")
        assert [h.result for h in first.hunks or ()] == ["reverted"]
        assert (root / "a.txt").read_text() == start.replace("line 14", "14")
        revert = (await ws.journal.entries())[0]
        assert (revert.hunks, revert.hunk_count) == ((1,), 2)
        # The user edits the first lines meanwhile: hunk 1's place is theirs now.
        (root / "a.txt").write_text((root / "a.txt").read_text().replace("line 0\n", "zero\n"))
        (second,) = await ws.journal.undo(since="1h")
        assert second.result == "undone"
        assert [(h.n, h.result) for h in second.hunks or ()] == [(2, "reverted")]
        assert (root / "a.txt").read_text() == start.replace("line 0\n", "zero\n")
        entries = await ws.journal.entries()
        assert await ws.journal.undo(since="1h") == []  # every hunk is back: undone
        assert await ws.journal.entries() == entries
        (again,) = await ws.journal.undo(ids=[change.id], hunks=[1])
        assert again.result == "refused"
        assert again.reason is not None
        assert again.reason.startswith("already undone by ")
        assert (root / "a.txt").read_text() == start.replace("line 0\n", "zero\n")


@pytest.mark.anyio
async def test_undoing_a_partially_reverted_change_leaves_the_file_as_before_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    start = "".join(f"line {k}\n" for k in range(16))
    (root / "a.txt").write_text(start)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        agent = ws.session(label="agent")
        await _write(agent, "a.txt", start.replace("line 1\n", "one\n").replace("line 14", "14"))
        await _write(agent, "a.txt", "rewritten\n")
        older = (await ws.journal.entries())[1]
        await ws.journal.undo(ids=[(await ws.journal.entries())[0].id], label="user")
        await ws.journal.undo(ids=[older.id], hunks=[2], label="user")
        results = await ws.journal.undo(session="agent")
        assert [(r.id, r.result) for r in results] == [(older.id, "undone")]
        assert (root / "a.txt").read_text() == start
        (redo,) = await ws.journal.undo(ids=[(await ws.journal.entries())[0].id], label="user")
        assert redo.result == "undone"  # undoing the last revert by id puts hunk 1 back
        assert (root / "a.txt").read_text() == start.replace("line 1\n", "one\n")


@pytest.mark.anyio
async def test_a_folder_selects_a_move_out_of_it(tmp_path: Path) -> None:
    # A move from sub/ to elsewhere changed sub/: `log ROOT sub` and `undo ROOT --paths sub`
    # must find it by its source, as they find one into sub/ by its destination.
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "sub/a.txt"})
        moved = await s.call("move", {"source_path": "sub/a.txt", "destination_path": "b.txt"})
        assert not moved.is_error, moved.text
        for folder in ("sub", "sub/", str(root / "sub")):
            (entry,) = await ws.journal.entries(paths=[folder])
            assert entry.tool == "move"
        assert await ws.journal.entries(paths=["other"]) == []
        (result,) = await ws.journal.undo(session="agent", paths=["sub"])
        assert result.result == "undone"
    assert (root / "sub" / "a.txt").read_text() == "a\n"
    assert not (root / "b.txt").exists()
