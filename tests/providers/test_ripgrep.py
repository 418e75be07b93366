"""The local provider's native search: ripgrep's output, re-checked by the guards."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from dsh_fs.fs import FsGlobQuery, FsGrepHit, FsGrepQuery
from dsh_fs.providers import LocalFileSystem, LocalGuards

pytestmark = pytest.mark.anyio


class HideSecrets(LocalGuards):
    """A fence that refuses every path with "secret" in it."""

    confined = True

    def may_see(self, real: str) -> bool:
        return "secret" not in real


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel in ("a.txt", "secret/b.txt", "c/d.txt"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("needle\n", encoding="utf-8")
    return tmp_path.resolve()


async def test_files_ripgrep_finds_are_dropped_when_the_guards_refuse_them(root: Path) -> None:
    fs = LocalFileSystem(root, guards=HideSecrets())
    target = await fs.resolve(".")
    grep = fs.native_grep(target, FsGrepQuery(pattern="needle"))
    glob = fs.native_glob(target, FsGlobQuery(pattern="*.txt"))
    assert grep is not None
    assert glob is not None
    async with grep as batches:
        hits = sorted([(hit.path, hit.line_number) async for batch in batches for hit in batch])
    async with glob as batches:
        files = sorted([path async for batch in batches for path in batch])
    assert hits == [("a.txt", 1), ("c/d.txt", 1)]
    assert files == ["a.txt", "c/d.txt"]


async def test_an_include_ripgrep_cannot_take_as_a_type_leaves_the_search_to_the_tools(
    root: Path,
) -> None:
    fs = LocalFileSystem(root)
    target = await fs.resolve(".")
    assert fs.native_grep(target, FsGrepQuery(pattern="x", include="a:b")) is None
    assert fs.native_grep(target, FsGrepQuery(pattern="x", include="*.txt")) is not None


async def test_ripgrep_output_lines_are_cut_to_the_asked_bytes(root: Path) -> None:
    (root / "long.txt").write_bytes(b"needle " + b"x" * 10_000 + b"\r\nneedle\r\n")
    fs = LocalFileSystem(root)
    found = fs.native_grep(await fs.resolve("."), FsGrepQuery(pattern="needle", line_bytes=10))
    assert found is not None
    async with found as batches:
        hits = [hit async for batch in batches for hit in batch if hit.path == "long.txt"]
    assert [(hit.line_number, hit.line, hit.truncated) for hit in hits] == [
        (1, b"needle xxx", True),
        (2, b"needle", False),
    ]


async def test_without_the_binary_there_is_no_native_search_and_grep_still_works(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_fs import Workspace
    from dsh_fs.providers.local import _filesystem as _local

    monkeypatch.setattr(_local, "find_rg", lambda: None)
    async with Workspace.local(root) as workspace:
        assert (
            workspace.fs.native_grep(await workspace.fs.resolve("."), FsGrepQuery(pattern="x"))
            is None
        )
        result = await workspace.session().call("grep", {"pattern": "needle", "path": "c"})
    assert result.text == "Found 1 match\n\nc/d.txt\nLine 1: needle"


def _children() -> set[int]:
    """This process's live child processes (Linux: /proc lists each thread's children)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            text = (task / "children").read_text(encoding="ascii")
        except FileNotFoundError:
            continue  # a thread that ended meanwhile (another test's idle worker) has none
        found.update(int(pid) for pid in text.split())
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
async def test_a_search_cancelled_while_ripgrep_writes_kills_it(root: Path) -> None:
    # More matching output than a pipe holds: ripgrep is still writing when we stop reading.
    (root / "many.txt").write_bytes(b"needle line\n" * 400_000)
    fs = LocalFileSystem(root)
    before = _children()
    grep = fs.native_grep(await fs.resolve("."), FsGrepQuery(pattern="needle"))
    assert grep is not None
    running: set[int] = set()
    with anyio.fail_after(30), anyio.CancelScope() as scope:
        async with grep as batches:
            async for _ in batches:
                running = _children() - before
                scope.cancel()
                await anyio.lowlevel.checkpoint()
    assert running, "ripgrep had already finished: the test proves nothing"
    assert not _children() & running  # killed and reaped before the block was left


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
async def test_a_consumer_that_stops_early_gets_no_error_and_ripgrep_is_killed(root: Path) -> None:
    (root / "many.txt").write_bytes(b"needle line\n" * 400_000)
    fs = LocalFileSystem(root)
    before = _children()
    grep = fs.native_grep(await fs.resolve("."), FsGrepQuery(pattern="needle"))
    assert grep is not None
    running: set[int] = set()
    with anyio.fail_after(30):
        async with grep as batches:
            async for _ in batches:
                running = _children() - before
                break
    assert running, "ripgrep had already finished: the test proves nothing"
    assert not _children() & running  # killed and reaped before the block was left


needs_prlimit = pytest.mark.skipif(
    not hasattr(resource, "prlimit"),
    reason="no prlimit: ripgrep's memory is not bounded here",
)


def _long_line_tree(root: Path) -> None:
    # One line of 48 MiB, its match at the very end: ripgrep holds the whole line.
    (root / "long.txt").write_bytes(b"x" * (48 << 20) + b" needle tail\nneedle 2\n")


@needs_prlimit
async def test_ripgrep_reaching_its_memory_bound_abandons_the_search(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_fs.fs import NativeSearchAbandoned
    from dsh_fs.providers.local import _ripgrep

    _long_line_tree(root)
    monkeypatch.setattr(_ripgrep, "RG_GREP_MEMORY", 16 << 20)
    fs = LocalFileSystem(root)
    found = fs.native_grep(await fs.resolve("."), FsGrepQuery(pattern="needle"))
    assert found is not None
    with pytest.raises(NativeSearchAbandoned, match="memory bound"):
        await _drained(found)


@needs_prlimit
@pytest.mark.parametrize("sandboxed", [False, True])
async def test_a_grep_ripgrep_abandons_is_answered_whole_by_the_pure_engine(
    root: Path, monkeypatch: pytest.MonkeyPatch, sandboxed: bool
) -> None:
    from dsh_fs import Workspace
    from dsh_fs.discovery import DiscoveryConfig
    from dsh_fs.providers.local import _ripgrep

    _long_line_tree(root)
    opened = Workspace.sandbox if sandboxed else Workspace.local
    async with opened(root, discovery=DiscoveryConfig(native=False)) as pure:
        expected = (await pure.session().call("grep", {"pattern": "needle"})).text
    monkeypatch.setattr(_ripgrep, "RG_GREP_MEMORY", 16 << 20)
    async with opened(root) as workspace:
        result = await workspace.session().call("grep", {"pattern": "needle"})
    assert not result.is_error
    assert result.text == expected
    assert "long.txt\nLine 1: xxx" in result.text
    assert "Line 2: needle 2" in result.text


async def _drained(found: AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]]) -> None:
    async with found as batches:
        async for _ in batches:
            pass


async def test_glob_lists_oldest_first_and_files_of_one_time_in_path_order_as_the_pure_engine(
    tmp_path: Path,
) -> None:
    import os

    from dsh_fs import Workspace
    from dsh_fs.discovery import DiscoveryConfig

    same = 1_700_000_000_000_000_000
    times = {"z.txt": same - 10**9, "a.txt": same, "a-b.txt": same, "a/b.txt": same}
    times |= {"b.txt": same, "a/c/d.txt": same, "new.txt": same + 10**9}
    for rel, mtime in times.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
        os.utime(path, ns=(mtime, mtime))
    fs = LocalFileSystem(tmp_path)
    glob = fs.native_glob(await fs.resolve("."), FsGlobQuery(pattern="*.txt"))
    assert glob is not None
    async with glob as batches:
        files = [path async for batch in batches for path in batch]
    # Component by component: "a/…" before "a-b.txt" and "a.txt" ("/" sorts as lowest).
    assert files == ["z.txt", "a/b.txt", "a/c/d.txt", "a-b.txt", "a.txt", "b.txt", "new.txt"]
    texts = []
    for native in (True, False):
        async with Workspace.local(tmp_path, discovery=DiscoveryConfig(native=native)) as ws:
            texts.append((await ws.session().call("glob", {"pattern": "*.txt"})).text)
    assert texts[0] == texts[1]


def test_a_glob_listing_fed_in_pieces_is_stat_ed_whole_paths_only(tmp_path: Path) -> None:
    from dsh_fs.providers.local._ripgrep import _Stamper

    for rel in ("a.txt", "sub/b.txt", "sub/c.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    (tmp_path / "sub" / "d").mkdir()  # listed, then found not to be a regular file
    stamper = _Stamper(str(tmp_path), LocalGuards())
    # A path cut between two pieces of ripgrep's output is stat-ed once it is whole.
    for piece in (b"./a.txt\0./su", b"b/b.txt\0./sub/d\0./gone.txt\0", b"./sub/c.t", b"xt\0"):
        stamper.feed(piece)
    assert stamper.paths == ["a.txt", "sub/b.txt", "sub/c.txt"]
    assert stamper.times == [(tmp_path / rel).stat().st_mtime_ns for rel in stamper.paths]


def test_an_abandoned_glob_listing_stats_nothing_more(tmp_path: Path) -> None:
    from dsh_fs.providers.local._ripgrep import _glob_argv, _Stamper, find_rg

    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    stamper = _Stamper(str(tmp_path), LocalGuards())
    binary = find_rg()
    assert binary is not None
    stamper.abandon()
    stamper.run(_glob_argv(binary, FsGlobQuery(pattern="*.txt")))  # returns at once: no rg
    assert stamper.paths == []


async def test_a_glob_thread_waiting_for_ripgrep_ends_when_the_listing_is_abandoned(
    tmp_path: Path,
) -> None:
    from anyio import to_thread

    from dsh_fs.providers.local._ripgrep import _Stamper

    stamper = _Stamper(str(tmp_path), LocalGuards())
    # A ripgrep that prints nothing for an hour: the thread waits for its output.
    waiting = [sys.executable, "-c", "import time; time.sleep(3600)"]
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(to_thread.run_sync, stamper.run, waiting)
            await anyio.lowlevel.checkpoint()  # the thread may be waiting, or not started
            stamper.abandon()
    assert stamper.paths == []


def test_a_long_glob_listing_is_stat_ed_a_thousand_at_a_time_in_order(tmp_path: Path) -> None:
    from dsh_fs.providers.local._ripgrep import _stamped_below

    names = [f"f{index:05}.txt" for index in range(2500)]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / names[1500]).unlink()  # gone in the second thousand: that one is dropped
    times, kept = _stamped_below(str(tmp_path), names)
    assert kept == names[:1500] + names[1501:]
    assert times == [(tmp_path / name).stat().st_mtime_ns for name in kept]


def _stand_in(tmp_path: Path, body: str) -> list[str]:
    """The argv of a program standing in for ripgrep (any arguments after it are ignored):
    `body`, Python run in the searched directory."""
    script = tmp_path / "stand-in.py"
    script.write_text(body, encoding="utf-8")
    return [sys.executable, str(script)]


_SAYS_ITS_PID = """
import os, time
with open("pid", "w") as fifo:  # the test reads it: this program is running
    fifo.write(str(os.getpid()))
time.sleep(20)
open("survived", "w").close()
"""


def _killed_and_reaped(tmp_path: Path, pid: int) -> None:
    assert not (tmp_path / "survived").exists()
    with pytest.raises(ProcessLookupError):  # not even a zombie: waited for
        os.kill(pid, 0)


async def test_an_abandoned_glob_listing_kills_its_ripgrep_and_reaps_it(tmp_path: Path) -> None:
    from anyio import to_thread

    from dsh_fs.providers.local._ripgrep import _Stamper

    os.mkfifo(tmp_path / "pid")
    stamper = _Stamper(str(tmp_path), LocalGuards())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(to_thread.run_sync, stamper.run, _stand_in(tmp_path, _SAYS_ITS_PID))
            pid = int(await to_thread.run_sync((tmp_path / "pid").read_text))
            assert stamper.abandon()  # it had begun: the thread ends once the program does
    assert stamper.returncode is None
    assert stamper.paths == []
    _killed_and_reaped(tmp_path, pid)


async def test_a_cancelled_glob_has_killed_and_reaped_its_ripgrep_when_it_returns(
    tmp_path: Path,
) -> None:
    from anyio import to_thread

    from dsh_fs.providers.local._ripgrep import closing, rg_glob

    os.mkfifo(tmp_path / "pid")
    argv = _stand_in(tmp_path, _SAYS_ITS_PID)
    binary = tmp_path / "rg"  # the glob's "ripgrep": it runs the stand-in, whatever it is asked
    binary.write_text(f"#!/bin/sh\nexec {argv[0]} {argv[1]}\n", encoding="utf-8")
    binary.chmod(0o755)
    glob = rg_glob(str(binary), str(tmp_path), "/x", FsGlobQuery(pattern="*"), LocalGuards())

    async def listed() -> None:
        async with closing(glob) as batches:
            async for _ in batches:
                pass

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(listed)
            pid = int(await to_thread.run_sync((tmp_path / "pid").read_text))
            group.cancel_scope.cancel()
    _killed_and_reaped(tmp_path, pid)


def test_a_glob_reads_ripgrep_s_standard_error_while_it_lists(tmp_path: Path) -> None:
    from dsh_fs.providers.local._ripgrep import _STDERR_KEPT, _Stamper

    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    # Four pipes' worth of errors before the listing: read only after the listing, they
    # would block it for good (the alarm ends it after 20 s instead).
    body = """
import signal, sys
signal.alarm(20)
sys.stderr.buffer.write(b"e" * (256 << 10))
sys.stderr.flush()
sys.stdout.buffer.write(b"./a.txt\\0")
"""
    stamper = _Stamper(str(tmp_path), LocalGuards())
    stamper.run(_stand_in(tmp_path, body))
    assert stamper.returncode == 0
    assert stamper.paths == ["a.txt"]
    assert stamper.errors == b"e" * _STDERR_KEPT
