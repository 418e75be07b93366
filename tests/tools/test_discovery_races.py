"""Another local process swapping a directory and a link to the outside while the sandbox
searches (issue 22, items 3 and 4): nothing of the outside is ever shown, on either engine,
and the race is never an internal error."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.providers import SandboxFileSystem

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]

CALLS = 60
"""Searches of each tool per run (the swapper runs flat out meanwhile)."""

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2() -> Callable[..., int]:
    libc = ctypes.CDLL(None, use_errno=True)
    function = libc.renameat2
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    function.argtypes += [ctypes.c_uint]
    return function


@pytest.fixture
def swapped(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    """A root whose directory ``d`` is swapped, over and over, with the link ``l`` to an
    outside directory; yields the root and the count of swaps made."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outside-name.txt").write_text("needle outside\n", encoding="utf-8")
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "inside.txt").write_text("needle inside\n", encoding="utf-8")
    (root / "l").symlink_to(outside)
    swap = _renameat2()
    a, b = os.fsencode(root / "d"), os.fsencode(root / "l")
    if swap(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE) != 0:
        pytest.skip(f"renameat2(RENAME_EXCHANGE) refused: {os.strerror(ctypes.get_errno())}")
    stop = threading.Event()
    swaps = [1]

    def swapper() -> None:
        while not stop.is_set():
            swap(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
            swaps[0] += 1

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        yield root.resolve(), swaps
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("native", [True, False], ids=["rg", "pure"])
async def test_a_directory_swapped_with_an_outside_link_never_shows_outside_lines_or_names(
    swapped: tuple[Path, list[int]], native: bool
) -> None:
    root, swaps = swapped
    fs = SandboxFileSystem([root])
    leaks: list[str] = []
    errors: list[str] = []
    async with Workspace(fs, cwd=str(root), discovery=DiscoveryConfig(native=native)) as ws:
        session = ws.session()
        for _ in range(CALLS):
            for tool, arguments in (("grep", {"pattern": "needle"}), ("glob", {"pattern": "*"})):
                with anyio.fail_after(60):
                    result = await session.call(tool, arguments)
                if "outside" in result.text:
                    leaks.append(result.text)
                if result.code is not None and result.code != "FS_SANDBOX_DENIED":
                    errors.append(f"{result.code}: {result.text}")
    print(f"{2 * CALLS} racing calls, {swaps[0]} swaps, {len(leaks)} leaks, {len(errors)} errors")
    assert swaps[0] > CALLS
    assert leaks == []
    assert errors == []
