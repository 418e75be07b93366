"""A write's outcome never carries an outside file, whatever a racing process swaps in.

With the policy off a write replaces whatever it finds, and its outcome reports the prior
text (`before`). Another process may swap the target for a symbolic link to an outside file
after the sandbox checked the target and before the write opens the prior file: the prior
file is then the outside one. The fence decides on the kernel's path of the opened prior file
(`LocalGuards.may_reveal`), so the outcome withholds it. Each deterministic test has a
control showing that the same swap leaks without the fence.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FsCapture, FsTarget, FsWriteOutcome, WriteGuard
from dsh_fs.providers import LocalFileSystem, LocalGuards, SandboxFileSystem
from dsh_fs.providers.local._guards import UNGUARDED

from .test_sandbox import _InstrumentedSandbox, snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]

SECRET = "outside secret\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    (top / "root").mkdir()
    (top / "root" / "target.txt").write_text("inside\n", encoding="utf-8")
    (top / "outside").mkdir()
    (top / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return top


class SwapBeforeWrite(LocalFileSystem):
    """Swaps `victim` for a symlink to `elsewhere` after the sandbox checked the write's
    target and right before the critical section opens the prior file."""

    def __init__(
        self, base: Path | str, victim: Path, elsewhere: Path, guards: LocalGuards = UNGUARDED
    ) -> None:
        super().__init__(base, guards=guards)
        self.victim, self.elsewhere = victim, elsewhere
        self.swaps = 0

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        self.victim.unlink()
        self.victim.symlink_to(self.elsewhere)
        self.swaps += 1
        return await super().write_text(target, content, expected, capture=capture)


def swapping_sandbox(tree: Path) -> tuple[SandboxFileSystem, Callable[[], int]]:
    """A sandbox on ``root`` whose inner provider swaps ``target.txt`` for a link to the
    outside secret before each write; the callable counts the swaps."""
    made: list[SwapBeforeWrite] = []

    def make(base: str, guards: LocalGuards) -> LocalFileSystem:
        made.append(
            SwapBeforeWrite(
                base, tree / "root" / "target.txt", tree / "outside" / "secret.txt", guards
            )
        )
        return made[0]

    return _InstrumentedSandbox(tree / "root", make), lambda: made[0].swaps


async def test_a_target_swapped_for_an_outside_link_before_the_prior_open_is_not_revealed(
    tree: Path,
) -> None:
    victim, secret = tree / "root" / "target.txt", tree / "outside" / "secret.txt"
    # Control: without the fence the swap really puts the outside file into `before`.
    bare = SwapBeforeWrite(tree / "root", victim, secret)
    leaked = await bare.write_text(await bare.resolve("target.txt"), "mine\n")
    assert leaked.before == SECRET
    victim.unlink()
    victim.write_text("inside\n", encoding="utf-8")

    fs, swaps = swapping_sandbox(tree)
    outside_before = snapshot(tree / "outside")
    outcome = await fs.write_text(await fs.resolve("target.txt"), "mine\n")
    assert swaps() == 1
    assert (outcome.operation, outcome.before, outcome.after) == ("update", None, "mine\n")
    # The write replaced the link inside the root; the outside file is untouched.
    assert not victim.is_symlink()
    assert victim.read_text(encoding="utf-8") == "mine\n"
    assert snapshot(tree / "outside") == outside_before


async def test_a_swapped_write_through_a_policy_free_session_carries_no_outside_text(
    tree: Path,
) -> None:
    fs, swaps = swapping_sandbox(tree)
    async with Workspace(fs, cwd=tree / "root", policy=False) as workspace:
        result = await workspace.session().call(
            "write", {"file_path": "target.txt", "content": "mine\n"}
        )
    assert swaps() == 1
    assert not result.is_error, result.text
    assert result.value == {
        "path": str(tree / "root" / "target.txt"),
        "operation": "update",
        "before": None,
        "after": "mine\n",
    }
    assert "secret" not in result.text
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == SECRET


@contextmanager
def swapping(victim: Path, secret: Path) -> Iterator[Callable[[], int]]:
    """A thread swapping `victim` between an inside file and a link to `secret` as fast as it
    can (each swap one atomic rename), until the block ends; yields a swap counter."""
    stop = threading.Event()
    count = [0]
    link, plain = victim.with_name(".swap-link"), victim.with_name(".swap-file")

    def run() -> None:
        while not stop.is_set():
            os.symlink(secret, link)
            os.replace(link, victim)
            plain.write_text("inside\n", encoding="utf-8")
            os.replace(plain, victim)
            count[0] += 2

    thread = threading.Thread(target=run, name="swapper", daemon=True)
    thread.start()
    try:
        yield lambda: count[0]
    finally:
        stop.set()
        thread.join()


RACING_WRITES = 2000
"""At most this many writes race the swapper..."""
WINDOWS_HIT = 25
"""...stopping once this many of them opened the outside file as their prior file."""


async def test_writes_racing_a_process_that_swaps_in_outside_links_never_reveal_them(
    tree: Path,
) -> None:
    victim, secret = tree / "root" / "target.txt", tree / "outside" / "secret.txt"
    seen: dict[tuple[str | None, str | None], int] = {}
    async with Workspace.sandbox(tree / "root", policy=False) as workspace:
        session = workspace.session()
        with swapping(victim, secret) as swaps, anyio.fail_after(120):
            for n in range(RACING_WRITES):
                result = await session.call(
                    "write", {"file_path": "target.txt", "content": f"mine {n}\n"}
                )
                value = result.value or {}
                before = value.get("before")
                assert before is None or "secret" not in before, (n, before)
                assert "secret" not in result.text
                if result.is_error:
                    shown = None
                elif before is None:
                    shown = "withheld"
                else:
                    shown = "inside" if before == "inside\n" else "ours"
                seen[result.code, shown] = seen.get((result.code, shown), 0) + 1
                if seen.get((None, "withheld"), 0) >= WINDOWS_HIT:
                    break
            assert swaps() > 0
    # What a race can give: the resolve saw the link (refused), the prior file opened was the
    # outside one (withheld), or an inside one (shown: the swapper's or a previous write's).
    assert set(seen) <= {
        ("FS_SANDBOX_DENIED", None),
        (None, "withheld"),
        (None, "inside"),
        (None, "ours"),
    }, seen
    assert secret.read_text(encoding="utf-8") == SECRET
