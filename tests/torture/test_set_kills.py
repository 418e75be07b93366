"""Change sets under SIGKILL (SPEC §13): a child applies sets over several files, each one
`edit_files` call moving every file to the next generation, and is killed at random moments,
many times. After each kill the next start (`Workspace.local`) finishes or rolls back what
the child left, and every file must then show one generation: all old or all new, never
mixed, never torn."""

from __future__ import annotations

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

AGENT = Path(__file__).with_name("set_agent.py")
FILES = 5
PADDING = "y" * 99 + "\n"


def text(generation: int, index: int) -> str:
    return f"gen = {generation}\nfile {index}\n" + PADDING * 1000


def generations(root: Path) -> list[int]:
    found = []
    for index in range(FILES):
        content = (root / f"f{index}.txt").read_text(encoding="utf-8")
        generation = int(content.split("\n", 1)[0].removeprefix("gen = "))
        assert content == text(generation, index), "a torn or foreign file"
        found.append(generation)
    return found


def run_and_kill(root: Path, rng: random.Random) -> int:
    """Start the agent, let it finish a random number of sets, wait a random moment (most
    of it inside a set's publication), SIGKILL it; the sets it reported."""
    args = [sys.executable, str(AGENT), str(root), str(FILES), "never"]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stderr is not None
    reported = 0
    try:
        for _ in range(rng.randint(1, 4)):
            if not child.stdout.readline():
                break
            reported += 1
        time.sleep(rng.uniform(0, 0.05))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    reported += sum(1 for line in child.stdout.read().splitlines() if line.startswith("set "))
    err = child.stderr.read()
    child.stdout.close()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL, f"the agent failed on its own:\n{err}"
    return reported


async def recover(root: Path) -> tuple[str, ...]:
    async with Workspace.local(root) as workspace:
        return tuple(recovery.outcome for recovery in workspace.recovered)


@pytest.mark.slow
@pytest.mark.parametrize("kills", [int(os.environ.get("SET_KILLS", "100"))])
def test_sigkill_during_change_sets_leaves_every_set_all_old_or_all_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kills: int
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "root"
    root.mkdir()
    for index in range(FILES):
        (root / f"f{index}.txt").write_text(text(0, index), encoding="utf-8")
    rng = random.Random(20261204)
    outcomes: Counter[str] = Counter()
    mixed = sets = half_published = 0
    for _ in range(kills):
        sets += run_and_kill(root, rng)
        # How often the kill left files mixed: what the recovery has to repair.
        half_published += len(set(generations(root))) > 1
        outcomes.update(anyio.run(recover, root))
        found = generations(root)
        mixed += len(set(found)) > 1
    print(
        f"kills={kills} sets_reported={sets} generation={generations(root)[0]} "
        f"half_published={half_published} rolled_back={outcomes['rolled back']} "
        f"finished={outcomes['finished']} mixed={mixed}"
    )
    assert mixed == 0
    assert sets > 0, "the agent never finished a set"
    # Every reported set stands: the files are at least at the last reported generation.
    assert generations(root)[0] >= sets
