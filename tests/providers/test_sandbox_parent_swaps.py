"""A refused mutation changes nothing anywhere, when another process swaps a parent directory
for a link to the outside right before the critical section.

Before anything in a directory changes (staging residue swept, a staged copy made, a missing
parent created), the guards look at the kernel's path of its descriptor. Each test has a
control showing what the same swap does without the fence.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsEditRequest, WriteGuard
from dsh_fs.providers import LocalFileSystem

from .test_sandbox import (
    _InstrumentedSandbox,
    _Swapper,
    _SwappingLocal,
    denied,
    restore,
    snapshot,
)
from .test_staging import dead_pid, residue_of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/sub/deep.txt`` (the sandbox) and ``outside/``."""
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "deep.txt").write_text("deep\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    return tmp_path


@pytest.mark.parametrize("guard", [None, CreateIfAbsent()], ids=["replace", "create"])
async def test_a_refused_write_leaves_a_dead_writers_residue_outside_alone(
    tree: Path, guard: WriteGuard | None
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    residue = residue_of(elsewhere, dead_pid())
    # Control: without the fence, the redirected write sweeps it (it is residue after all).
    bare = _SwappingLocal(tree / "root", _Swapper(victim, elsewhere, "before-lock"))
    await bare.write_text(await bare.resolve("sub/new.txt"), "escaped\n", guard)
    assert not residue.exists()
    (elsewhere / "new.txt").unlink()
    restore(victim)

    residue = residue_of(elsewhere, dead_pid())
    outside_before = snapshot(elsewhere)
    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
    with pytest.raises(FsError) as caught:
        await fs.write_text(await fs.resolve("sub/new.txt"), "escaped\n", guard)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("write", tree / "root" / "sub" / "new.txt")
    assert residue.is_dir()
    assert (residue / "content").read_bytes() == b"half a file"
    assert snapshot(elsewhere) == outside_before


async def test_a_refused_edit_leaves_a_dead_writers_residue_outside_alone(tree: Path) -> None:
    # Reads unconfined: the edit may read the outside file, so only the directory checks
    # stand between it and the outside directory.
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    (elsewhere / "deep.txt").write_text("deep\n", encoding="utf-8")
    residue = residue_of(elsewhere, dead_pid())
    outside_before = snapshot(elsewhere)
    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = _InstrumentedSandbox(
        tree / "root",
        lambda base, g: _SwappingLocal(base, swapper, g),
        confine_reads=False,
    )
    with pytest.raises(FsError) as caught:
        await fs.edit_text(
            await fs.resolve("sub/deep.txt"), FsEditRequest(old_string="deep", new_string="x")
        )
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("edit", tree / "root" / "sub" / "deep.txt")
    assert residue.is_dir()
    assert snapshot(elsewhere) == outside_before


async def test_missing_parents_are_never_created_outside(tree: Path) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    # Control: without the fence the swap makes the directories (and the file) outside.
    bare = _SwappingLocal(tree / "root", _Swapper(victim, elsewhere, "before-lock"))
    await bare.write_text(await bare.resolve("sub/a/b/new.txt"), "escaped\n")
    assert (elsewhere / "a" / "b" / "new.txt").is_file()
    (elsewhere / "a" / "b" / "new.txt").unlink()
    (elsewhere / "a" / "b").rmdir()
    (elsewhere / "a").rmdir()
    restore(victim)

    outside_before = snapshot(elsewhere)
    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
    with pytest.raises(FsError) as caught:
        await fs.write_text(await fs.resolve("sub/a/b/new.txt"), "escaped\n")
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("write", tree / "root" / "sub" / "a" / "b" / "new.txt")
    assert snapshot(elsewhere) == outside_before
    assert sorted(os.listdir(tree / "root" / "sub.orig")) == ["deep.txt"]


async def test_missing_parents_are_created_inside_as_before(tree: Path) -> None:
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: LocalFileSystem(base, guards=g))
    outcome = await fs.write_text(await fs.resolve("sub/a/b/c/new.txt"), "new\n")
    assert outcome.operation == "create"
    assert (tree / "root" / "sub" / "a" / "b" / "c" / "new.txt").read_text(
        encoding="utf-8"
    ) == "new\n"


RACING_WRITES = 300


async def test_writes_racing_a_process_that_swaps_the_parent_never_touch_the_outside(
    tree: Path,
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    residue = residue_of(elsewhere, dead_pid())
    outside_before = snapshot(elsewhere)
    stop = threading.Event()
    swaps = [0]

    def swap_forever() -> None:
        # The parent is a directory or a link to the outside, flipping as fast as it can.
        aside = victim.with_name("sub.orig")
        while not stop.is_set():
            victim.rename(aside)
            with contextlib.suppress(FileExistsError):  # a write made a new `sub` meanwhile
                victim.symlink_to(elsewhere, target_is_directory=True)
            swaps[0] += 1
            while True:
                with contextlib.suppress(FileNotFoundError):
                    if victim.is_symlink():
                        victim.unlink()
                    else:  # a new `sub` a write made inside the root while it was missing
                        shutil.rmtree(victim, ignore_errors=True)
                try:
                    aside.rename(victim)
                    break
                except OSError:
                    continue

    codes: dict[str | None, int] = {}
    thread = threading.Thread(target=swap_forever, name="swapper", daemon=True)
    async with Workspace.sandbox(tree / "root", policy=False) as workspace:
        session = workspace.session()
        thread.start()
        try:
            with anyio.fail_after(120):
                for n in range(RACING_WRITES):
                    name = f"sub/new-{n % 7}.txt" if n % 2 else f"sub/d{n % 5}/new.txt"
                    result = await session.call("write", {"file_path": name, "content": "x\n"})
                    codes[result.code] = codes.get(result.code, 0) + 1
        finally:
            stop.set()
            thread.join()
    assert swaps[0] > 0
    assert "TOOL_INTERNAL_ERROR" not in codes, codes
    assert residue.is_dir()
    assert snapshot(elsewhere) == outside_before, codes
