"""Undos under SIGKILL (issue 36): a child reverts hunks of its own changes and undoes whole
change sets, and is killed at random moments, many times. Afterwards every file is a state
the operations can leave (never torn: a whole generation, with or without its hunk 1
reverted), the files of a set agree, and the next reader finds the journal consistent: no
damaged record, nothing in the store but entries and their pre-images, every entry's chain
unbroken."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace

from .undo_agent import GROUP, group_text, hunk_text

AGENT = Path(__file__).with_name("undo_agent.py")


def run_and_kill(root: Path, store: Path, seed: int, rng: random.Random) -> list[str]:
    """Start the agent, read a random number of its log lines, wait a random moment (inside
    or between operations), SIGKILL it; its complete log lines."""
    args = [sys.executable, str(AGENT), str(root), str(store), str(seed)]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stderr is not None
    lines: list[str] = []
    try:
        for _ in range(rng.randint(1, 16)):
            line = child.stdout.readline()
            if not line:
                break
            lines.append(line)
        time.sleep(rng.uniform(0, 0.03))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    lines.extend(child.stdout.read().splitlines(keepends=True))
    err = child.stderr.read()
    child.stdout.close()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL, f"the agent failed on its own:\n{err}"
    return [line.strip() for line in lines if line.endswith("\n")]


def _hunk_state(text: str) -> tuple[int, int]:
    """The generations of ``h.txt``'s two changing lines; the file must be exactly what
    `hunk_text` makes of them (else it is torn)."""
    first = re.search(r"first of generation ([0-9]+)", text)
    second = re.search(r"second of generation ([0-9]+)", text)
    assert first is not None, "h.txt is torn"
    assert second is not None, "h.txt is torn"
    state = int(first.group(1)), int(second.group(1))
    assert text == hunk_text(*state), f"h.txt is torn at {state}"
    return state


def _group_tokens(root: Path) -> list[int]:
    """Each set file's token; each file must be exactly `group_text` at it."""
    tokens = []
    for name in GROUP:
        text = (root / name).read_text()
        found = re.search(r"token([0-9]+)", text)
        assert found is not None, f"{name} is torn"
        assert text == group_text(name, int(found.group(1))), f"{name} is torn"
        tokens.append(int(found.group(1)))
    return tokens


@pytest.mark.slow
@pytest.mark.parametrize("kills", [int(os.environ.get("UNDO_KILLS", "120"))])
def test_sigkill_during_hunk_reverts_and_set_undos_leaves_no_torn_file_and_a_sound_journal(
    tmp_path: Path, kills: int
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "h.txt").write_text(hunk_text(0, 0))
    for name in GROUP:
        (root / name).write_text(group_text(name, 0))
    rng = random.Random(20261204)
    begun: Counter[str] = Counter()
    killed_in: Counter[str] = Counter()
    mixed = 0
    for seed in range(kills):
        lines = run_and_kill(root, store, seed, rng)
        begun.update(line.split()[1] for line in lines if line.startswith("begin "))
        starts = [line.split()[1] for line in lines if line.startswith("begin ")]
        ends = [line for line in lines if line.startswith("done ")]
        if len(starts) > len(ends):
            killed_in[starts[-1]] += 1
        _hunk_state((root / "h.txt").read_text())
        tokens = _group_tokens(root)
        mixed += len(set(tokens)) > 1
        if len(set(tokens)) > 1:
            # A set undo killed half-way: undoing the set whole again is what a person
            # does; the files must then agree (each guarded, all or none).
            anyio.run(_finish_set, root, store)
            assert len(set(_group_tokens(root))) == 1
    assert begun["hunk"] > 0, begun
    assert begun["group"] > 0, begun
    entries = anyio.run(_check, root, store)
    print(
        f"kills={kills} begun={dict(begun)} killed_in={dict(killed_in)} "
        f"sets_left_mixed={mixed} entries={entries}"
    )
    if mixed:
        # Everything above holds; what does not yet: a set's publication (`edit_files`)
        # and its undo are not crash-atomic across files (SPEC §13's durable intent
        # record, finished or rolled back at the next start, is the change sets' work).
        pytest.xfail(f"{mixed} of {kills} kills left a change set's files mixed")


async def _finish_set(root: Path, store: Path) -> None:
    """Undo again the newest set that a killed undo left half undone."""
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        entries = await ws.journal.entries()
        group = next(e.group for e in entries if e.group is not None)
        results = await ws.journal.undo(ids=[group], label="check")
        assert {r.result for r in results} <= {"undone", "refused"}


async def _check(root: Path, store: Path) -> int:
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        entries, problems = await ws.journal.read()  # settles every dead writer's record
        assert problems == []
        names = set(os.listdir(ws.journal.location)) - {"lock"}
        expected = {"root"} | {f"{e.id}.json" for e in entries}
        expected |= {f"{e.id}.pre" for e in entries if e.before is not None}
        assert names == expected, "no stray in the store"
        assert all(e.undoable for e in entries)
        assert all(e.before != e.after for e in entries)
    assert sorted(os.listdir(root)) == sorted(["h.txt", *GROUP]), "no stray in the folder"
    return len(entries)
