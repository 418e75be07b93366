"""Resolving paths: `real_path` answers as `os.path.realpath` does, without its failures.

`os.path.realpath` raised EINVAL when a link was swapped for a file under it, and recursed once
per link (a 1,200-link chain was a `RecursionError`): both reached the model as
`TOOL_INTERNAL_ERROR`. Here: the same answers on ordinary trees, the kernel's own limit on
links (40) with its own error, and no internal error under racing swaps.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.providers import LocalFileSystem, SandboxFileSystem
from dsh_fs.providers.local._realpath import (
    MAX_SYMLINKS,
    PATH_MAX,
    lstat_link,
    real_path,
    resolve_path,
)

pytestmark = pytest.mark.anyio

LOOP = "too many levels of symbolic links"


@pytest.fixture
def top(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def chain(directory: Path, links: int, end: str = "data.txt") -> Path:
    """``link0 → link1 → … → end``: resolving ``link0`` follows `links` links."""
    for n in range(links):
        (directory / f"link{n}").symlink_to(f"link{n + 1}" if n + 1 < links else end)
    return directory / "link0"


# --- the same answers as os.path.realpath ---------------------------------------------------

NAMES = ["..", ".", "", "a", "b", "f.txt", "in", "out", "up", "dangle", "back", "file_dir", "x"]


@pytest.fixture(scope="module")
def links_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree of links in and out, relative and absolute, dangling and through a file."""
    top = tmp_path_factory.mktemp("world").resolve()
    (top / "root" / "a" / "b").mkdir(parents=True)
    (top / "outside").mkdir()
    (top / "root" / "f.txt").write_text("f\n", encoding="utf-8")
    (top / "root" / "in").symlink_to("a", target_is_directory=True)
    (top / "root" / "a" / "out").symlink_to("../../outside", target_is_directory=True)
    (top / "root" / "up").symlink_to("..", target_is_directory=True)
    (top / "root" / "dangle").symlink_to(top / "outside" / "missing")
    (top / "outside" / "back").symlink_to(top / "root", target_is_directory=True)
    (top / "root" / "file_dir").symlink_to("f.txt/x")
    (top / "root" / "a" / "b" / "x").symlink_to("../../up/outside/back/in/b")
    return top


@settings(max_examples=300)
@given(
    start=st.sampled_from(["", "root/", "root/a/", "outside/"]),
    parts=st.lists(st.sampled_from(NAMES), min_size=1, max_size=8),
)
def test_real_path_agrees_with_os_path_realpath(
    links_world: Path, start: str, parts: list[str]
) -> None:
    path = f"{links_world}/{start}{'/'.join(parts)}"
    assert real_path(path) == os.path.realpath(path)
    assert real_path(path, strict=True) == os.path.realpath(path)
    # What failed on the way is what os.path.realpath(strict=True) raises (resolve says a
    # path through a file names nothing from it).
    try:
        os.path.realpath(path, strict=True)
        expected = 0
    except OSError as error:
        expected = error.errno or 0
    assert resolve_path(path).failed == expected


# --- long chains and loops: the kernel's limit, the kernel's error ----------------------------


def test_a_chain_is_followed_up_to_the_kernels_limit_and_no_further(top: Path) -> None:
    (top / "data.txt").write_text("data\n", encoding="utf-8")
    (top / "ok").mkdir()
    (top / "long").mkdir()
    ok, long = (
        chain(top / "ok", MAX_SYMLINKS, "../data.txt"),
        chain(top / "long", 41, "../data.txt"),
    )
    # The kernel's own answers for the same two paths.
    assert ok.read_text(encoding="utf-8") == "data\n"
    with pytest.raises(OSError, match="symbolic links") as kernel:
        long.read_text(encoding="utf-8")
    assert kernel.value.errno == errno.ELOOP

    assert real_path(str(ok)) == str(top / "data.txt")
    assert real_path(str(long)) == str(long)  # as spelled: opening it fails as the kernel does
    with pytest.raises(OSError, match="symbolic links") as strict:
        real_path(str(long), strict=True)
    assert strict.value.errno == errno.ELOOP


def test_a_chain_of_1200_links_is_not_a_recursion_error(top: Path) -> None:
    head = chain(top, 1200)
    if sys.version_info < (3, 13):  # the failure this replaces
        with pytest.raises(RecursionError):
            os.path.realpath(head)
    assert real_path(str(head)) == str(head)
    with pytest.raises(OSError, match="symbolic links") as strict:
        real_path(str(head), strict=True)
    assert strict.value.errno == errno.ELOOP


def test_a_path_longer_than_the_kernel_accepts_is_not_walked(top: Path) -> None:
    (top / "out").symlink_to("/", target_is_directory=True)
    long = str(top / "out") + "/a" * (PATH_MAX // 2)
    assert real_path(long) == long  # as spelled: the kernel refuses it whole
    with pytest.raises(OSError, match="File name too long") as strict:
        real_path(long, strict=True)
    assert strict.value.errno == errno.ENAMETOOLONG


@pytest.mark.parametrize("sandboxed", [False, True], ids=["local", "sandbox"])
async def test_a_path_of_many_components_is_refused_without_looking_at_each(
    top: Path, sandboxed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # os.path.realpath made one lstat per component, each on a longer string: quadratic
    # time on the event loop (a read of a 1 MB path of 500,000 components took minutes).
    (top / "root").mkdir()
    calls = [0]
    real_lstat, real_readlink = os.lstat, os.readlink

    def counted(call: Callable[..., Any]) -> Callable[..., Any]:
        def count(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return call(*args, **kwargs)

        return count

    spelled = "/".join(["d"] * 20_000)
    workspace = (Workspace.sandbox if sandboxed else Workspace.local)(top / "root", policy=False)
    async with workspace:
        session = workspace.session()
        monkeypatch.setattr(os, "lstat", counted(real_lstat))
        monkeypatch.setattr(os, "readlink", counted(real_readlink))
        result = await session.call("read", {"file_path": spelled})
        monkeypatch.undo()
    assert result.code == "FS_IO_ERROR"
    assert result.text.endswith(": file name too long")
    assert calls[0] < 10, calls


def workspaces(top: Path) -> list[Workspace]:
    """Policy-free, so that every tool reaches the provider."""
    return [
        Workspace.local(top / "root", policy=False),
        Workspace.sandbox(top / "root", policy=False),
    ]


@pytest.mark.parametrize("links", [41, 1200])
@pytest.mark.parametrize("spelled", ["link0", "link0/inner.txt"])
async def test_a_long_chain_is_not_found_for_every_tool_and_stays_as_it_was(
    top: Path, links: int, spelled: str
) -> None:
    (top / "root").mkdir()
    (top / "root" / "data.txt").write_text("data\n", encoding="utf-8")
    chain(top / "root", links)
    before = sorted(os.listdir(top / "root"))
    shown = top / "root" / spelled
    for workspace in workspaces(top):
        async with workspace:
            session = workspace.session()
            results = [
                await session.call("read", {"file_path": spelled}),
                await session.call("write", {"file_path": spelled, "content": "x"}),
                await session.call(
                    "edit", {"file_path": spelled, "old_string": "data", "new_string": "x"}
                ),
            ]
        assert [(r.code, r.text) for r in results] == [
            ("FS_NOT_FOUND", f'Error: cannot {verb} "{shown}": {LOOP}')
            for verb in ("read", "write", "edit")
        ], workspace
    assert sorted(os.listdir(top / "root")) == before
    assert (top / "root" / "data.txt").read_text(encoding="utf-8") == "data\n"


@pytest.mark.parametrize("spelled", ["link0", "link0/inner.txt"])
@pytest.mark.parametrize("sandboxed", [False, True], ids=["local", "sandbox"])
async def test_a_delete_through_a_long_chain_is_not_found_and_removes_nothing(
    top: Path, spelled: str, sandboxed: bool
) -> None:
    (top / "root").mkdir()
    (top / "root" / "data.txt").write_text("data\n", encoding="utf-8")
    chain(top / "root", 1200)
    before = sorted(os.listdir(top / "root"))
    fs = SandboxFileSystem([top / "root"]) if sandboxed else LocalFileSystem(top / "root")
    with pytest.raises(FsError) as caught:
        await fs.delete(await fs.resolve(spelled))
    assert (caught.value.code, caught.value.message) == (
        FsErrorCode.NOT_FOUND,
        f'cannot delete "{top / "root" / spelled}": {LOOP}',
    )
    assert sorted(os.listdir(top / "root")) == before


async def test_the_sandbox_refuses_a_long_chain_at_every_check(top: Path) -> None:
    (top / "root").mkdir()
    chain(top / "root", 1200)
    fs = SandboxFileSystem([top / "root"])
    shown = top / "root" / "link0"
    target = await fs.resolve("link0")
    calls: list[tuple[Callable[[], Awaitable[object]], str]] = [
        (lambda: fs.stat(target), f'cannot read "{shown}"'),
        (lambda: fs.list_dir(target), f'cannot read "{shown}"'),
        (lambda: fs.process_path(target), f'cannot access "{shown}"'),
        (lambda: fs.lstat("link0/inner.txt"), f'cannot read "{shown / "inner.txt"}"'),
    ]
    for call, prefix in calls:
        with pytest.raises(FsError) as caught:
            await call()
        assert (caught.value.code, caught.value.message) == (
            FsErrorCode.NOT_FOUND,
            f"{prefix}: {LOOP}",
        )
    # The link itself is an entry like any other.
    info = await fs.lstat("link0")
    assert info is not None
    assert info.link_target == "link1"


def test_a_sandbox_root_behind_a_long_chain_is_a_value_error(top: Path) -> None:
    (top / "real").mkdir()
    head = chain(top, 1200, "real")
    with pytest.raises(ValueError, match=LOOP):
        SandboxFileSystem([head])


# --- links swapped while they are resolved ----------------------------------------------------


@contextmanager
def swapped_once_looked_at(victim: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The first time anything looks at `victim` (a link) with `lstat` or `readlink`, it is
    replaced by a regular file right after that call returns: the widest window a racing
    process can hit, forced. Yields the calls that looked."""
    looked: list[str] = []
    real_lstat, real_readlink = os.lstat, os.readlink

    def watch(call: Callable[..., Any], name: str) -> Callable[..., Any]:
        def watched(path: Any, *args: Any, **kwargs: Any) -> Any:
            result = call(path, *args, **kwargs)
            if os.fspath(path) == str(victim) and not looked:
                looked.append(name)
                plain = victim.with_name(".plain")
                plain.write_text("now a file\n", encoding="utf-8")
                os.replace(plain, victim)
            return result

        return watched

    monkeypatch.setattr(os, "lstat", watch(real_lstat, "lstat"))
    monkeypatch.setattr(os, "readlink", watch(real_readlink, "readlink"))
    yield looked


def test_os_path_realpath_fails_where_real_path_answers(
    top: Path, monkeypatch: pytest.MonkeyPatch, portable: None
) -> None:
    # The walk (the portable way, and the fallback where the kernel's lookup fails): where
    # the kernel resolves a path (`kernel_path`), no `readlink` of ours can be raced at all.
    (top / "data.txt").write_text("data\n", encoding="utf-8")
    victim = top / "link"
    if sys.version_info < (3, 13):  # the failure this replaces: lstat, swap, readlink EINVAL
        victim.symlink_to("data.txt")
        with (
            swapped_once_looked_at(victim, monkeypatch),
            pytest.raises(OSError, match="Invalid argument") as caught,
        ):
            os.path.realpath(victim)
        assert caught.value.errno == errno.EINVAL
        monkeypatch.undo()
        victim.unlink()
    victim.symlink_to("data.txt")
    with swapped_once_looked_at(victim, monkeypatch) as looked:
        # readlink answers once, atomically: it was a link then.
        assert real_path(str(victim)) == str(top / "data.txt")
    assert looked == ["readlink"]


def test_lstat_of_a_link_swapped_before_its_readlink_reports_what_is_there_now(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = top / "link"
    victim.symlink_to("data.txt")
    with swapped_once_looked_at(victim, monkeypatch) as looked:
        info, link = lstat_link(str(victim))
    assert looked == ["lstat"]
    assert link is None
    assert info.st_size == len("now a file\n")


async def test_lstat_of_an_entry_that_never_holds_still_is_an_io_error_saying_retry(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = top / "link"
    victim.symlink_to("data.txt")
    real_lstat, real_readlink = os.lstat, os.readlink

    def become(kind: str) -> None:
        spare = top / ".spare"
        if kind == "link":
            spare.symlink_to("data.txt")
        else:
            spare.write_text("file\n", encoding="utf-8")
        os.replace(spare, victim)

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        result = real_lstat(path, *args, **kwargs)
        if os.fspath(path) == str(victim):
            become("file")  # a file by the time readlink looks
        return result

    def readlink(path: Any, *args: Any, **kwargs: Any) -> str:
        try:
            return str(real_readlink(path, *args, **kwargs))
        finally:
            if os.fspath(path) == str(victim):
                become("link")  # a link again by the time lstat looks

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "readlink", readlink)
    with pytest.raises(FsError) as caught:
        await LocalFileSystem(top).lstat("link")
    assert (caught.value.code, caught.value.message) == (
        FsErrorCode.IO_ERROR,
        f'cannot read "{victim}": it kept changing while it was read; retry',
    )


async def test_a_tool_racing_a_forced_swap_gets_an_answer_not_an_internal_error(
    top: Path, monkeypatch: pytest.MonkeyPatch, portable: None
) -> None:
    # The walk, forced: the kernel's lookup never calls the `readlink` this swap hooks.
    (top / "root").mkdir()
    (top / "root" / "data.txt").write_text("data\n", encoding="utf-8")
    victim = top / "root" / "link"
    victim.symlink_to("data.txt")
    async with Workspace.sandbox(top / "root") as workspace:
        session = workspace.session()
        with swapped_once_looked_at(victim, monkeypatch) as looked:
            result = await session.call("read", {"file_path": "link"})
    assert looked
    # Resolved while it was a link (to data.txt), or after it became a file: either is an
    # answer the model can use.
    assert not result.is_error, result.text
    assert (result.value or {})["lines"] in (
        [{"number": 1, "text": "data"}],
        [{"number": 1, "text": "now a file"}],
    )


@contextmanager
def swapping_links(root: Path) -> Iterator[Callable[[], int]]:
    """A thread flipping ``f.txt`` between a link to ``data.txt`` and a file, and ``d``
    between a link to the directory ``real`` and a file, each flip one atomic rename, until
    the block ends. Yields a flip counter."""
    stop = threading.Event()
    flips = [0]
    spare_link, spare_file = root / ".spare-link", root / ".spare-file"

    def flip(name: str, link_to: str) -> None:
        os.symlink(link_to, spare_link)
        os.replace(spare_link, root / name)
        spare_file.write_text("plain\n", encoding="utf-8")
        os.replace(spare_file, root / name)

    def run() -> None:
        while not stop.is_set():
            flip("f.txt", "data.txt")
            flip("d", "real")
            flips[0] += 4

    thread = threading.Thread(target=run, name="flipper", daemon=True)
    thread.start()
    try:
        yield lambda: flips[0]
    finally:
        stop.set()
        thread.join()


RACING_READS = 3000


async def test_thousands_of_reads_racing_link_swaps_never_fail_internally(top: Path) -> None:
    root = top / "root"
    (root / "real").mkdir(parents=True)
    (root / "data.txt").write_text("data\n", encoding="utf-8")
    (root / "real" / "f.txt").write_text("real\n", encoding="utf-8")
    (root / "f.txt").write_text("plain\n", encoding="utf-8")
    (root / "d").write_text("plain\n", encoding="utf-8")
    codes: dict[str | None, int] = {}
    async with Workspace.sandbox(root) as fenced, Workspace.local(root) as local:
        sessions = [fenced.session(), local.session()]
        providers = [fenced.fs, local.fs]
        with swapping_links(root) as flips, anyio.fail_after(120):
            for n in range(RACING_READS):
                path = ("f.txt", "d/f.txt", "d")[n % 3]
                result = await sessions[n % 2].call("read", {"file_path": path})
                codes[result.code] = codes.get(result.code, 0) + 1
                try:
                    await providers[n % 2].lstat(path)
                except FsError as error:
                    codes[f"lstat {error.code.value}"] = (
                        codes.get(f"lstat {error.code.value}", 0) + 1
                    )
            assert flips() > 0
    # Found (a file, a link's target), not found (a name below a file), a directory: never
    # TOOL_INTERNAL_ERROR.
    assert set(codes) <= {
        None,
        "FS_NOT_FOUND",
        "FS_NOT_REGULAR_FILE",
        "lstat FS_NOT_FOUND",
    }, codes
