"""Crash consistency: SIGKILL a publishing child at random moments; no file is ever torn.

After every kill each file must be byte-identical to the last generation the child finished
publishing or to the one it was publishing: never a mix, never empty, never truncated. No
stray regular file may appear, and the staging directories a killed child left behind are
swept by the next provider that mutates there, never while their owner still runs.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._publish import PUBLICATION_ENV

from .publisher import PAUSE_ENV, expected_content

PUBLISHER = Path(__file__).with_name("publisher.py")
QUICK_FILES = {"a.txt": 1 << 10, "b.txt": 64 << 10, "c.txt": 1 << 20}
FULL_FILES = {**QUICK_FILES, "d.txt": 8 << 20}

History = dict[str, tuple[int, int]]
"""Per file: (last generation done, last generation begun)."""


@pytest.fixture(autouse=True)
def staging_publication(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tortures are the staging directory's (the unnamed file, the default where the
    platform has it, has `test_crash_unnamed`); the publisher children inherit the choice."""
    monkeypatch.setenv(PUBLICATION_ENV, "staging")


def run_and_kill(workspace: Path, files: dict[str, int], rng: random.Random) -> list[str]:
    """Start a publisher, read a random number of its log lines, then SIGKILL it."""
    args = [sys.executable, str(PUBLISHER), str(workspace)]
    args += [f"{name}:{size}" for name, size in files.items()]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    lines: list[str] = []
    try:
        for _ in range(rng.randint(1, 16)):
            line = child.stdout.readline()
            if not line:
                break
            lines.append(line)
        # A random moment inside (or between) publications, not only at log boundaries.
        time.sleep(rng.uniform(0, 0.004))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    # Drain through the same text wrapper: `communicate()` would read the raw pipe and miss
    # lines the wrapper has already buffered. The child is dead, so both reads end.
    lines.extend(child.stdout.read().splitlines(keepends=True))
    assert child.stderr is not None
    err = child.stderr.read()
    child.stdout.close()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL, f"publisher failed on its own:\n{err}"
    return [line.strip() for line in lines if line.endswith("\n")]


def record(lines: list[str], history: History) -> None:
    for line in lines:
        kind, name, generation = line.split()
        done, begun = history.get(name, (-1, -1))
        gen = int(generation)
        history[name] = (gen, max(begun, gen)) if kind == "done" else (done, gen)


def check_files(workspace: Path, files: dict[str, int], history: History) -> None:
    for name, size in files.items():
        path = workspace / name
        done, begun = history.get(name, (-1, -1))
        if not path.exists():
            assert done == -1, f"{name} vanished after generation {done} was published"
            continue
        data = path.read_bytes()
        candidates = {g for g in (done, begun) if g >= 0}
        matches = [g for g in candidates if data == expected_content(name, size, g).encode()]
        assert matches, f"{name} is torn ({len(data)} bytes), not generation {sorted(candidates)}"
        history[name] = (matches[0], matches[0])  # what the next child will continue from


def stray_entries(workspace: Path, files: dict[str, int]) -> list[str]:
    """Regular files that are not the published ones (staging dirs are checked separately)."""
    return sorted(p.name for p in workspace.iterdir() if not p.is_dir() and p.name not in files)


def staging_dirs(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.iterdir() if p.is_dir())


@pytest.mark.parametrize(
    ("files", "kills"),
    [
        pytest.param(QUICK_FILES, 12, id="quick"),
        pytest.param(FULL_FILES, 300, id="full", marks=pytest.mark.slow),
    ],
)
def test_sigkill_at_random_moments_never_leaves_a_torn_or_stray_file(
    tmp_path: Path, files: dict[str, int], kills: int
) -> None:
    rng = random.Random(20261130)
    history: History = {}
    residue_seen = 0
    mid_publication = 0
    for _ in range(kills):
        record(run_and_kill(tmp_path, files, rng), history)
        mid_publication += any(begun > done for done, begun in history.values())
        check_files(tmp_path, files, history)
        assert stray_entries(tmp_path, files) == []
        residue_seen = max(residue_seen, len(staging_dirs(tmp_path)))
    assert any(done >= 0 for done, _ in history.values()), "the publisher never published"

    async def sweep() -> int:
        return await LocalFileSystem(str(tmp_path)).sweep_staging(str(tmp_path))

    anyio.run(sweep)
    assert staging_dirs(tmp_path) == []
    published = sum(done + 1 for done, _ in history.values())
    print(
        f"kills={kills} mid_publication={mid_publication} generations={published} "
        f"residue_max={residue_seen}"
    )


def test_staging_of_a_live_owner_is_never_swept(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, str(PUBLISHER), str(tmp_path), "big.txt:4096"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, PAUSE_ENV: "1"},
    )
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == "begin big.txt 0\n"
        assert child.stdout.readline() == "staged\n"  # paused right before its rename
        first = staging_dirs(tmp_path)
        assert len(first) == 1

        async def sweep() -> int:
            return await LocalFileSystem(str(tmp_path)).sweep_staging(str(tmp_path))

        assert anyio.run(sweep) == 0
        assert staging_dirs(tmp_path) == first
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done big.txt 0\n"
        # The child goes straight on to its next publication, so compare only once it is
        # paused again: the first write's staging directory is gone, the new one is the only
        # one (checking for "none" right after `done` raced with that next publication).
        assert child.stdout.readline() == "begin big.txt 1\n"
        assert child.stdout.readline() == "staged\n"
        second = staging_dirs(tmp_path)
        assert len(second) == 1
        assert second != first
        assert (tmp_path / "big.txt").read_bytes() == expected_content("big.txt", 4096, 0).encode()
    finally:
        child.kill()
        child.communicate(timeout=30)
