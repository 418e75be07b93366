"""`edit_files` against a crash (SPEC §13): a process killed mid-set leaves its intent
record, and the next start on that root finishes or rolls the set back before anything else,
so every file of the set is all old or all new, and a file someone else changed since is
left as they made it (and reported).

The kills are real (SIGKILL of a child, `tests/torture/set_agent.py`) at deterministic
points: right after the intent record is stored, and right after file k of n is published.
The random kills are the torture's (`tests/torture/test_set_kills.py`)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import Workspace, _platform
from dsh_fs.fs import SetFileRecord, SetRecord
from dsh_fs.providers.local import (
    LocalSetRecords,
    default_set_records_location,
    set_records_directory,
)
from dsh_fs.tools import SetRecovery

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parents[1] / "torture" / "set_agent.py"
FILES = 4
PADDING = "x" * 79 + "\n"


def generation_text(generation: int, index: int) -> str:
    return f"gen = {generation}\n" + f"file {index}\n" + PADDING * 200


def make_files(root: Path, count: int = FILES) -> None:
    for index in range(count):
        (root / f"f{index}.txt").write_text(generation_text(0, index), encoding="utf-8")


def generations(root: Path, count: int = FILES) -> list[int]:
    found = []
    for index in range(count):
        text = (root / f"f{index}.txt").read_text(encoding="utf-8")
        generation = int(text.split("\n", 1)[0].removeprefix("gen = "))
        assert text == generation_text(generation, index), "a torn or foreign file"
        found.append(generation)
    return found


def file_record(*, path: str, before: str | None, after: str | None) -> SetFileRecord:
    """A file of an intent record: its old text, the digest of `after`."""
    digest = None if after is None else SetFileRecord.digest(after)
    return SetFileRecord(path=path, before=before, after=digest)


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's state directory, this test's own (the child's and this process's)."""
    place = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(place))
    return place


@pytest.fixture
def root(tmp_path: Path) -> Path:
    place = tmp_path / "root"
    place.mkdir()
    return place.resolve()


def records_of(root: Path) -> Path:
    return Path(set_records_directory(default_set_records_location(), str(root)))


def run_agent(root: Path, kill: str, sets: int = 1) -> str:
    """Run the agent until it kills itself at `kill`; its output."""
    child = subprocess.run(
        [sys.executable, str(AGENT), str(root), str(FILES), kill, str(sets)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    return child.stdout


def run_log(root: Path, journal: Path) -> subprocess.CompletedProcess[str]:
    """`dsh-fs log ROOT` (its journal in the test's folder)."""
    return subprocess.run(
        [sys.executable, "-m", "dsh_fs", "log", str(root), "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_a_kill_right_after_the_intent_record_leaves_every_file_old_at_the_next_start(
    root: Path, state: Path
) -> None:
    make_files(root)
    run_agent(root, "record")
    # Each file's old text kept as a link to the file itself, not copied into the record.
    left = sorted(records_of(root).iterdir(), key=lambda path: path.suffix)
    assert [path.suffix for path in left] == [".kept"] * FILES + [".set"]
    assert left[-1].stat().st_size < 2048
    assert sorted(path.read_text(encoding="utf-8") for path in left[:-1]) == sorted(
        generation_text(0, index) for index in range(FILES)
    )
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == recovery.kept == ()
    assert generations(root) == [0] * FILES
    assert list(records_of(root).iterdir()) == []


@pytest.mark.parametrize("published", [1, 2, FILES - 1])
async def test_a_kill_after_some_files_are_published_rolls_the_set_back_at_the_next_start(
    root: Path, state: Path, published: int
) -> None:
    make_files(root)
    run_agent(root, f"file:{published}")
    assert generations(root) == [1] * published + [0] * (FILES - published)
    async with Workspace.local(root) as workspace:
        assert workspace.recovered == (
            SetRecovery(
                id=workspace.recovered[0].id,
                outcome="rolled back",
                restored=tuple(str(root / f"f{index}.txt") for index in range(published)),
            ),
        )
    assert generations(root) == [0] * FILES
    assert list(records_of(root).iterdir()) == []


async def test_a_kill_after_the_last_file_is_published_finishes_the_set(
    root: Path, state: Path
) -> None:
    make_files(root)
    run_agent(root, f"file:{FILES}")
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "finished"
    assert generations(root) == [1] * FILES
    assert list(records_of(root).iterdir()) == []


async def test_the_first_tool_call_of_a_workspace_recovers_before_it_runs(
    root: Path, state: Path
) -> None:
    make_files(root)
    run_agent(root, "file:2")
    workspace = Workspace.sandbox(root)
    try:
        result = await workspace.session().call("read", {"file_path": "f1.txt"})
        assert not result.is_error, result.text
        # The read shows the rolled-back file: recovery ran before the call did.
        assert "gen = 0" in result.text
        assert [recovery.outcome for recovery in workspace.recovered] == ["rolled back"]
    finally:
        await workspace.aclose()


async def test_a_file_someone_changed_since_the_crash_is_left_as_they_made_it_and_reported(
    root: Path, state: Path
) -> None:
    make_files(root)
    run_agent(root, "file:2")
    (root / "f1.txt").write_text("theirs\n", encoding="utf-8")
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == (str(root / "f0.txt"),)
    assert recovery.kept == (str(root / "f1.txt"),)
    assert (root / "f1.txt").read_text(encoding="utf-8") == "theirs\n"
    for index in (0, 2, 3):
        assert (root / f"f{index}.txt").read_text(encoding="utf-8") == generation_text(0, index)


async def test_the_cli_recovers_a_killed_set_before_it_answers(root: Path, state: Path) -> None:
    make_files(root)
    run_agent(root, "file:3")
    listed = run_log(root, root.parent / "journal")
    assert listed.returncode == 0, listed.stderr
    assert generations(root) == [0] * FILES
    assert list(records_of(root).iterdir()) == []


async def test_a_set_whose_writer_is_still_running_is_left_alone(root: Path, state: Path) -> None:
    make_files(root)
    running = LocalSetRecords(str(records_of(root)))
    text = generation_text(0, 0)
    record = SetRecord(
        id="set-running",
        files=(SetFileRecord(path=str(root / "f0.txt"), before=text, after="new\n"),),
    )
    await running.begin(record)
    (root / "f0.txt").write_text("new\n", encoding="utf-8")
    try:
        async with Workspace.local(root) as workspace:
            assert workspace.recovered == ()
        assert (root / "f0.txt").read_text(encoding="utf-8") == "new\n"
    finally:
        await running.end("set-running")
        await running.aclose()


async def test_files_a_set_created_or_deleted_go_back_too(root: Path, state: Path) -> None:
    (root / "kept.txt").write_text("old\n", encoding="utf-8")
    (root / "deleted.txt").write_text("was here\n", encoding="utf-8")
    (root / "created.txt").write_text("made by the set\n", encoding="utf-8")
    (root / "theirs.txt").write_text("made by someone else\n", encoding="utf-8")
    (root / "kept.txt").write_text("new\n", encoding="utf-8")
    (root / "deleted.txt").unlink()
    dead = LocalSetRecords(str(records_of(root)))
    await dead.begin(
        SetRecord(
            id="set-dead",
            files=(
                file_record(path=str(root / "kept.txt"), before="old\n", after="new\n"),
                file_record(path=str(root / "deleted.txt"), before="was here\n", after=None),
                file_record(
                    path=str(root / "created.txt"),
                    before=None,
                    after="made by the set\n",
                ),
                file_record(path=str(root / "theirs.txt"), before=None, after="ours\n"),
                file_record(path=str(root / "never.txt"), before="x\n", after="y\n"),
            ),
        )
    )
    await dead.aclose()  # the writer is gone: its lock with it, its record left behind
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    # theirs.txt and never.txt hold neither of the set's texts: someone else's, kept.
    assert recovery.restored == tuple(
        str(root / name) for name in ("kept.txt", "deleted.txt", "created.txt")
    )
    assert recovery.kept == (str(root / "theirs.txt"), str(root / "never.txt"))
    assert (root / "kept.txt").read_text(encoding="utf-8") == "old\n"
    assert (root / "deleted.txt").read_text(encoding="utf-8") == "was here\n"
    assert not (root / "created.txt").exists()
    assert (root / "theirs.txt").read_text(encoding="utf-8") == "made by someone else\n"
    assert not (root / "never.txt").exists()


async def test_the_intent_records_are_out_of_every_tools_reach(root: Path, state: Path) -> None:
    make_files(root)
    run_agent(root, "record")
    record = next(records_of(root).iterdir())
    workspace = Workspace.local(root)
    try:
        workspace._recovered = True  # look before the records are cleared
        session = workspace.session()
        result = await session.call("read", {"file_path": str(record)})
        assert result.is_error
        assert result.code == "FS_NOT_FOUND"
        result = await session.call("write", {"file_path": str(record), "content": "{}"})
        assert result.is_error
        assert "the change sets' intent records" in result.text
    finally:
        await workspace.aclose()


async def test_a_record_in_the_first_format_found_at_the_start_is_still_rolled_back(
    root: Path, state: Path
) -> None:
    # What a killed process of an older release left: one JSON object, old texts inline.
    make_files(root)
    for index in range(2):
        (root / f"f{index}.txt").write_text(generation_text(1, index), encoding="utf-8")
    body = {
        "id": "set-0123456789abcdef",
        "files": [
            {
                "path": str(root / f"f{index}.txt"),
                "before": generation_text(0, index),
                "after": SetFileRecord.digest(generation_text(1, index)),
            }
            for index in range(FILES)
        ],
    }
    records_of(root).mkdir(parents=True)
    (records_of(root) / "set-0123456789abcdef.set").write_text(json.dumps(body), "utf-8")
    async with Workspace.local(root) as workspace:
        assert workspace.recovered == (
            SetRecovery(
                id="set-0123456789abcdef",
                outcome="rolled back",
                restored=(str(root / "f0.txt"), str(root / "f1.txt")),
            ),
        )
    assert generations(root) == [0] * FILES
    assert list(records_of(root).iterdir()) == []


async def test_an_old_text_its_file_no_longer_holds_is_copied_into_the_record(
    root: Path, state: Path
) -> None:
    # The file changed between the read and the record (or is in another encoding): its
    # bytes are not the old text, so the record holds the text itself, not a link.
    make_files(root, 1)
    text = generation_text(0, 0)
    path = root / "f0.txt"
    path.write_text(generation_text(7, 0), encoding="utf-8")
    dead = LocalSetRecords(str(records_of(root)))
    record = SetRecord(
        id="set-copied",
        files=(
            SetFileRecord(
                path=str(path), before=text, after=SetFileRecord.digest("new\n"), source=str(path)
            ),
        ),
    )
    await dead.begin(record)
    assert [entry.suffix for entry in records_of(root).iterdir()] == [".set"]
    await dead.aclose()
    path.write_text("new\n", encoding="utf-8")
    finder = LocalSetRecords(str(records_of(root)))
    try:
        assert await finder.orphans() == [record]
    finally:
        await finder.aclose()


async def test_a_record_torn_before_its_name_goes_with_the_files_it_kept(
    root: Path, state: Path
) -> None:
    # Killed after keeping links, before the record got its name: nothing was published.
    make_files(root)
    records = records_of(root)
    records.mkdir(parents=True)
    (records / "set-torn.0badf00d.set-tmp").write_bytes(b"dsh-fs change set 2\n{")
    os.link(root / "f0.txt", records / "set-torn.0badf00d.0.kept")
    os.link(root / "f1.txt", records / "set-other.0badf00d.0.kept")  # a live set's
    (records / "set-other.0badf00d.set-tmp").write_bytes(b"")
    held = os.open(records / "set-other.0badf00d.set-tmp", os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        finder = LocalSetRecords(str(records))
        try:
            assert await finder.orphans() == []
        finally:
            await finder.aclose()
        assert sorted(path.name for path in records.iterdir()) == [
            "set-other.0badf00d.0.kept",
            "set-other.0badf00d.set-tmp",
        ]
    finally:
        os.close(held)
    assert generations(root) == [0] * FILES


@pytest.mark.parametrize("torn", [b"", b"\0" * 64, b"dsh-fs chan", b"dsh-fs change set 2\n{"])
async def test_a_record_cut_short_by_a_power_loss_is_dropped_and_a_foreign_one_left(
    root: Path, state: Path, torn: bytes
) -> None:
    # A record is named before its fsync returns (one wait on the disk): a power loss then
    # can leave it cut short, of a set that published nothing.
    make_files(root)
    records = records_of(root)
    records.mkdir(parents=True)
    (records / "set-torn.set").write_bytes(torn)
    os.link(root / "f0.txt", records / "set-torn.0badf00d.0.kept")
    (records / "set-foreign.set").write_bytes(b"{not a record")
    # Whole, but the file it kept is gone (not a power loss): left for a person too.
    whole = SetRecord(
        id="set-whole", files=(SetFileRecord(path="f", before="x" * 10, after=None),)
    ).to_bytes({0: "set-whole.0badf00d.0.kept"})
    (records / "set-whole.set").write_bytes(whole)
    finder = LocalSetRecords(str(records))
    try:
        assert await finder.orphans() == []
    finally:
        await finder.aclose()
    assert sorted(path.name for path in records.iterdir()) == [
        "set-foreign.set",
        "set-whole.set",
    ]
    assert generations(root) == [0] * FILES


async def test_without_unnamed_files_a_record_is_renamed_into_place_and_recovered(
    root: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_platform, "open_unnamed", lambda dir_fd: None)
    make_files(root, 2)
    paths = [root / f"f{index}.txt" for index in range(2)]
    dead = LocalSetRecords(str(records_of(root)))
    record = SetRecord(
        id="set-renamed",
        files=tuple(
            SetFileRecord(
                path=str(path),
                before=generation_text(0, index),
                after=SetFileRecord.digest(generation_text(1, index)),
                source=str(path),
            )
            for index, path in enumerate(paths)
        ),
    )
    await dead.begin(record)
    suffixes = sorted(entry.suffix for entry in records_of(root).iterdir())
    assert suffixes == [".kept", ".kept", ".set"]
    await dead.aclose()
    published = root / "published.tmp"  # a publication: a new inode renamed over the file
    published.write_text(generation_text(1, 0), encoding="utf-8")
    published.replace(paths[0])
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    assert (recovery.restored, recovery.kept) == ((str(paths[0]),), ())
    assert generations(root, 2) == [0, 0]
    assert list(records_of(root).iterdir()) == []
