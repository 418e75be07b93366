"""Crash consistency of the unnamed (``O_TMPFILE``) publication path: the same SIGKILL
torture as `test_crash_consistency`, with the publisher told to use it. No torn file, no
stray file; a staging name left between a link and its rename is residue the next sweep
removes (counted apart, as the staging directories are)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import anyio
import pytest

from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._publish import PUBLICATION_ENV
from dsh_fs.providers.local._staging import STAGE_PREFIX

from .test_crash_consistency import FULL_FILES, QUICK_FILES, History, check_files, record
from .test_crash_consistency import run_and_kill as run_and_kill_staging

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not hasattr(os, "O_TMPFILE"), reason="needs O_TMPFILE"
)


def stray_files(workspace: Path, files: dict[str, int]) -> list[str]:
    """Regular files that are neither published ones nor staging residue."""
    return sorted(
        p.name
        for p in workspace.iterdir()
        if not p.is_dir() and p.name not in files and not p.name.startswith(STAGE_PREFIX)
    )


def residue(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.iterdir() if p.name.startswith(STAGE_PREFIX))


@pytest.mark.parametrize(
    ("files", "kills"),
    [
        pytest.param(QUICK_FILES, 12, id="quick"),
        pytest.param(FULL_FILES, 300, id="full", marks=pytest.mark.slow),
    ],
)
def test_sigkill_during_unnamed_publication_never_leaves_a_torn_or_stray_file(
    tmp_path: Path, files: dict[str, int], kills: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLICATION_ENV, "tmpfile")  # the publisher children inherit it
    rng = random.Random(20261202)
    history: History = {}
    residue_seen = 0
    for _ in range(kills):
        record(run_and_kill_staging(tmp_path, files, rng), history)
        check_files(tmp_path, files, history)
        assert stray_files(tmp_path, files) == []
        # Never a staging directory on this path; at most one staging name (one publication
        # at a time, and the next child's first mutation sweeps the last one's).
        assert all(not (tmp_path / name).is_dir() for name in residue(tmp_path))
        assert len(residue(tmp_path)) <= 1
        residue_seen = max(residue_seen, len(residue(tmp_path)))
    assert any(done >= 0 for done, _ in history.values()), "the publisher never published"

    async def sweep() -> int:
        return await LocalFileSystem(str(tmp_path)).sweep_staging(str(tmp_path))

    anyio.run(sweep)
    assert residue(tmp_path) == []
    published = sum(done + 1 for done, _ in history.values())
    print(f"kills={kills} generations={published} residue_max={residue_seen}")
