"""A change set's undo against a crash (SPEC §13): the journal's undo of a set keeps an
intent record while it restores, so a process killed half-way leaves it, and the next start
rolls the half-done undo back: every file of the set is all undone or all as the set left
it, and a file someone else changed since is left as they made it (and reported).

The kills are real (SIGKILL of a child, `tests/torture/set_undo_agent.py`) at deterministic
points: right after the undo's intent record is stored, and right after file k of 3 is
restored. The random kills are the torture's (`tests/torture/test_undo_kills.py`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import SetRecord
from dsh_fs.providers.local import LocalSetRecords

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parents[1] / "torture" / "set_undo_agent.py"
GROUP = ("g1.txt", "g2.txt", "g3.txt")


def group_text(name: str, token: int) -> str:
    return f"{name} keeps token{token} here\n" * 200


def tokens(root: Path) -> list[int]:
    found = []
    for name in GROUP:
        text = (root / name).read_text(encoding="utf-8")
        token = int(text.split("token", 1)[1].split(" ", 1)[0])
        assert text == group_text(name, token), "a torn or foreign file"
        found.append(token)
    return found


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    place = tmp_path / "root"
    place.mkdir()
    for name in GROUP:
        (place / name).write_text(group_text(name, 0), encoding="utf-8")
    return place.resolve()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "journal" / "store"


def records_left(store: Path) -> list[Path]:
    """The intent records beside the journal's store (every root's folder)."""
    sets = store / "sets"
    return [record for folder in sets.iterdir() for record in folder.iterdir()]


def run_agent(root: Path, store: Path, kill: str) -> str:
    """Run the agent until it kills itself at `kill` during the set's undo; its output."""
    child = subprocess.run(
        [sys.executable, str(AGENT), str(root), str(store), kill],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    assert child.stdout.startswith("set "), child.stdout
    return child.stdout


async def test_a_set_undo_killed_after_file_1_of_3_is_rolled_back_at_the_next_start(
    root: Path, store: Path
) -> None:
    run_agent(root, store, "restore:1")
    # Right after the kill the set is half undone: what the next start must settle.
    assert tokens(root) == [1, 1, 0]
    assert [record.suffix for record in records_left(store)] == [".set"]
    async with Workspace.sandbox(root, journal=store) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == (str(root / "g3.txt"),)
    assert recovery.kept == ()
    assert tokens(root) == [1, 1, 1]
    assert records_left(store) == []


async def test_a_set_undo_killed_after_file_2_of_3_is_rolled_back_at_the_next_start(
    root: Path, store: Path
) -> None:
    run_agent(root, store, "restore:2")
    assert tokens(root) == [1, 0, 0]
    async with Workspace.sandbox(root, journal=store) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.restored == (str(root / "g3.txt"), str(root / "g2.txt"))
    assert tokens(root) == [1, 1, 1]


async def test_a_set_undo_killed_after_its_last_restore_is_finished_at_the_next_start(
    root: Path, store: Path
) -> None:
    run_agent(root, store, "restore:3")
    async with Workspace.sandbox(root, journal=store) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "finished"
    assert tokens(root) == [0, 0, 0]
    assert records_left(store) == []


async def test_a_set_undo_killed_before_its_first_restore_leaves_the_set_whole(
    root: Path, store: Path
) -> None:
    run_agent(root, store, "record")
    async with Workspace.sandbox(root, journal=store) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == recovery.kept == ()
    assert tokens(root) == [1, 1, 1]
    assert records_left(store) == []


async def test_a_file_changed_since_a_killed_set_undo_is_left_as_they_made_it_and_reported(
    root: Path, store: Path
) -> None:
    run_agent(root, store, "restore:2")
    (root / "g2.txt").write_text("theirs\n", encoding="utf-8")
    async with Workspace.sandbox(root, journal=store) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == (str(root / "g3.txt"),)
    assert recovery.kept == (str(root / "g2.txt"),)
    assert (root / "g2.txt").read_text(encoding="utf-8") == "theirs\n"
    assert (root / "g3.txt").read_text(encoding="utf-8") == group_text("g3.txt", 1)
    assert records_left(store) == []


async def test_a_set_undo_that_runs_to_its_end_leaves_no_intent_record(
    root: Path, store: Path
) -> None:
    async with Workspace.sandbox(root, journal=store) as workspace:
        assert workspace.journal is not None
        edits = [
            {
                "file_path": name,
                "old_string": "token0 ",
                "new_string": "token1 ",
                "replace_all": True,
            }
            for name in GROUP
        ]
        session = workspace.session()
        for name in GROUP:  # the policy wants each file read before it is edited
            assert not (await session.call("read", {"file_path": name})).is_error
        made = await session.call("edit_files", {"edits": edits})
        assert made.value is not None
        results = await workspace.journal.undo(ids=[str(made.value["group"])])
    assert [result.result for result in results] == ["undone"] * 3
    assert tokens(root) == [0, 0, 0]
    assert records_left(store) == []


async def test_undoing_the_set_again_after_a_rolled_back_undo_undoes_every_file(
    root: Path, store: Path
) -> None:
    group = run_agent(root, store, "restore:2").split()[1]
    async with Workspace.sandbox(root, journal=store) as workspace:
        assert workspace.journal is not None
        # The roll-back is journaled as an undo of each undo it took back: the set's
        # changes are in force again, so the set's undo takes back all three.
        redos = [e for e in await workspace.journal.entries() if e.session.startswith("recovery")]
        assert sorted(e.path for e in redos) == [str(root / "g2.txt"), str(root / "g3.txt")]
        results = await workspace.journal.undo(ids=[group])
    assert [result.result for result in results] == ["undone"] * 3
    assert tokens(root) == [0, 0, 0]


class UnwritableRecords(LocalSetRecords):
    """Records that cannot be stored (a full disk, a read-only state folder)."""

    async def begin(self, record: SetRecord) -> None:
        raise FsError(FsErrorCode.IO_ERROR, "no space left on the records' disk")


async def test_a_set_undo_whose_intent_record_cannot_be_stored_undoes_nothing(
    root: Path, store: Path, tmp_path: Path
) -> None:
    async with Workspace.sandbox(root, journal=store) as workspace:
        assert workspace.journal is not None
        session = workspace.session()
        for name in GROUP:
            assert not (await session.call("read", {"file_path": name})).is_error
        edits = [
            {
                "file_path": name,
                "old_string": "token0 ",
                "new_string": "token1 ",
                "replace_all": True,
            }
            for name in GROUP
        ]
        made = await session.call("edit_files", {"edits": edits})
        assert made.value is not None
        workspace.journal.set_records = UnwritableRecords(str(tmp_path / "unwritable"))
        results = await workspace.journal.undo(ids=[str(made.value["group"])])
    assert {result.result for result in results} == {"refused"}
    assert all("no space left" in str(result.reason) for result in results)
    assert tokens(root) == [1, 1, 1]
