"""Staging residue: swept only when its owner process is gone, never a live writer's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._staging import STAGE_PREFIX, new_stage_dir

pytestmark = pytest.mark.anyio


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def residue_of(tmp_path: Path, pid: int) -> Path:
    """A staging directory as a killed writer `pid` would leave it, staged file inside."""
    ours = Path(new_stage_dir(str(tmp_path)))
    host = ours.name[len(STAGE_PREFIX) :].split("-")[0]
    theirs = tmp_path / f"{STAGE_PREFIX}{host}-{pid}-abc123"
    ours.rename(theirs)
    (theirs / "content").write_bytes(b"half a file")
    return theirs


async def test_sweep_removes_residue_of_a_dead_writer_only(tmp_path: Path) -> None:
    dead = residue_of(tmp_path, dead_pid())
    live = residue_of(tmp_path, os.getppid())
    foreign = tmp_path / f"{STAGE_PREFIX}not-ours"
    foreign.mkdir()
    removed = await LocalFileSystem(tmp_path).sweep_staging(tmp_path)
    assert removed == 1
    assert not dead.exists()
    assert live.exists()
    assert foreign.exists()


async def test_the_first_mutation_in_a_directory_sweeps_its_residue(tmp_path: Path) -> None:
    dead = residue_of(tmp_path, dead_pid())
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "hello\n")
    assert not dead.exists()
    assert names(tmp_path) == ["a.txt"]
