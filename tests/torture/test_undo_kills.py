"""Undos under SIGKILL (issue 36): a child reverts hunks of its own changes and undoes whole
change sets, and is killed at random moments, many times. After each kill the next start
(a workspace on the same root and journal store, whose opening runs `recover`, SPEC §13)
comes first; then every file is a state the operations can leave (never torn: a whole
generation, with or without its hunk 1 reverted), the files of a set agree whether the kill
fell in the set's publication (`edit_files`) or in its undo (both keep an intent record),
and the next reader finds the journal consistent: no damaged record, nothing in the store
but entries and their pre-images, every entry's chain unbroken."""

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
    # Per operation the kill fell in: left mixed at the kill, and still after the next start.
    mixed_at_kill: Counter[str] = Counter()
    mixed: Counter[str] = Counter()
    recovered: Counter[str] = Counter()
    for seed in range(kills):
        lines = run_and_kill(root, store, seed, rng)
        begun.update(line.split()[1] for line in lines if line.startswith("begin "))
        starts = [line.split()[1] for line in lines if line.startswith("begin ")]
        ends = [line for line in lines if line.startswith("done ")]
        during = starts[-1] if len(starts) > len(ends) else "between"
        killed_in[during] += 1
        mixed_at_kill[during] += len(set(_group_tokens(root))) > 1
        # SPEC §13 judges a set after the next start: it finishes or rolls back what the
        # killed process left (its set's publication or its undo) before anything else.
        recovered.update(anyio.run(_next_start, root, store))
        _hunk_state((root / "h.txt").read_text())
        mixed[during] += len(set(_group_tokens(root))) > 1
    assert begun["hunk"] > 0, begun
    assert begun["group"] > 0, begun
    entries = anyio.run(_check, root, store)
    print(
        f"kills={kills} begun={dict(begun)} killed_in={dict(killed_in)} "
        f"mixed_at_kill={dict(mixed_at_kill)} recovered={dict(recovered)} "
        f"mixed_after_next_start={dict(mixed)} entries={entries}"
    )
    assert sum(mixed.values()) == 0, f"a change set's files mixed after the next start: {mixed}"


async def _next_start(root: Path, store: Path) -> list[str]:
    """Open the workspace the agent uses (same root, same journal store): its opening
    recovers what the killed process left. The outcome of each set it recovered."""
    async with Workspace.sandbox(root, journal=store) as ws:
        return [recovery.outcome for recovery in ws.recovered]


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
