"""The journal under SIGKILL (SPEC §9): a child makes journaled writes, edits and creates
through the tools and is killed at random moments, many times. Afterwards the next reader
has finished every dead writer's pending record: each change that was published is one
entry (a kill after publication leaves an undoable entry; one before leaves none), the store
holds nothing but entries and their pre-images, the folder nothing but its files, and undoing
every entry, newest first, brings each file back to its exact first bytes."""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.providers import LocalFileSystem

from .journal_agent import content

AGENT = Path(__file__).with_name("journal_agent.py")
FILES = {"a.txt": 1 << 10, "b.txt": 64 << 10, "c.txt": 1 << 20}


def run_and_kill(root: Path, store: Path, seed: int, rng: random.Random) -> list[str]:
    """Start the agent, read a random number of its log lines, wait a random moment (inside
    or between changes), SIGKILL it; its complete log lines."""
    args = [sys.executable, str(AGENT), str(root), str(store), str(seed)]
    args += [f"{name}:{size}" for name, size in FILES.items()]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stderr is not None
    lines: list[str] = []
    try:
        for _ in range(rng.randint(1, 12)):
            line = child.stdout.readline()
            if not line:
                break
            lines.append(line)
        time.sleep(rng.uniform(0, 0.02))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    lines.extend(child.stdout.read().splitlines(keepends=True))
    err = child.stderr.read()
    child.stdout.close()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL, f"the agent failed on its own:\n{err}"
    return [line.strip() for line in lines if line.endswith("\n")]


@pytest.mark.slow
@pytest.mark.parametrize("kills", [int(os.environ.get("JOURNAL_KILLS", "150"))])
def test_sigkill_during_journaled_changes_leaves_every_entry_undoable_and_no_stray(
    tmp_path: Path, kills: int
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    first = {name: content(name, size, 0).encode() for name, size in FILES.items()}
    for name, data in first.items():
        (root / name).write_bytes(data)
    rng = random.Random(20261202)
    done: Counter[str] = Counter()
    killed_mid_change = 0
    for seed in range(kills):
        lines = run_and_kill(root, store, seed, rng)
        done.update(line.split()[1] for line in lines if line.startswith("done "))
        begun = [line for line in lines if line.startswith("begin ")]
        finished = [line for line in lines if line.startswith("done ")]
        killed_mid_change += len(begun) > len(finished)
    published = sum(done.values())
    assert published > 0, "the agent never published"
    result = anyio.run(_check, root, store, first, done, kills)
    print(
        f"kills={kills} killed_mid_change={killed_mid_change} reported_done={published} "
        f"entries={result['entries']} published_unreported={result['unreported']} "
        f"creates={result['creates']} undone={result['undone']} "
        f"ctime_only_moves={result['relinked']}"
    )


async def _check(
    root: Path, store: Path, first: dict[str, bytes], done: Counter[str], kills: int
) -> dict[str, int]:
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        journal = ws.journal
        entries, problems = await journal.read()  # settles every dead writer's record
        assert problems == []
        names = os.listdir(journal.location)
        expected = {"root", "lock"} | {f"{e.id}.json" for e in entries}
        expected |= {f"{e.id}.pre" for e in entries if e.before is not None}
        assert set(names) - {"lock"} == expected - {"lock"}, "no stray in the store"
        assert all(e.undoable for e in entries)
        # A change never published is no entry (its file would be at its `before`).
        assert all(e.before != e.after for e in entries)
        ids = [e.id for e in entries]
        assert len(set(ids)) == len(ids)

        per_file = Counter(Path(e.path).name for e in entries)
        unreported = relinked = 0
        for name in set(per_file) | set(done):
            # Each reported change is an entry; at most one per kill was published unreported.
            assert done[name] <= per_file[name], name
            unreported += per_file[name] - done[name]
        assert unreported <= kills

        # Each file's entries chain from its first version to its version now, each
        # pre-image the bytes the change before it left.
        for name in per_file:
            chain = [e for e in entries if Path(e.path).name == name]  # id order
            for older, newer in itertools.pairwise(chain):
                # Equal, or (a change killed before publication linked the file's inode into
                # the store and its reader unlinked it) the same inode and bytes, a new ctime.
                assert newer.before is not None
                assert older.after is not None
                assert journal.store.unchanged(older.after, newer.before), name
                relinked += newer.before != older.after
            info = await journal.fs.stat(await journal.fs.resolve(name))
            assert info is not None
            last = chain[-1].after
            assert last is not None
            assert journal.store.unchanged(last, info.version), name
            relinked += info.version != last
        creates = [e for e in entries if e.before is None]
        assert {Path(e.path).name for e in creates} == {n for n in per_file if n not in first}

        results = await journal.undo(since="1d", label="check")
        assert [r.result for r in results] == ["undone"] * len(entries), [
            r for r in results if r.result != "undone"
        ][:3]
    await LocalFileSystem(str(root)).sweep_staging(str(root))
    assert sorted(os.listdir(root)) == sorted(first), "no stray in the folder"
    for name, data in first.items():
        assert (root / name).read_bytes() == data, f"{name} is back to its first bytes"
    return {
        "entries": len(entries),
        "unreported": unreported,
        "creates": len(creates),
        "undone": len(results),
        "relinked": relinked,
    }
