"""Hostile objects on the local filesystem, through `Session.call`: prompt, exact, bounded.

FIFOs, sockets, devices (directly and through links), symlink loops, dangling links, a 5 GiB
sparse file, a 64 MiB single-line file, a file truncated and regrown while being read, a file
replaced by a directory mid-call, and permission-denied files (as an unprivileged child when
the suite runs as root). Each call is bounded by `anyio.fail_after`; where a file is large,
the peak of traced allocations is bounded too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Session, Workspace
from dsh_fs.fs import FS_EDIT_INTENT, FS_WRITE_INTENT, FsIntent
from dsh_fs.providers.local import _filesystem as _local
from dsh_fs.runtime import Next, ToolResult

pytestmark = pytest.mark.anyio

PROMPT = 60
"""Seconds any single hostile call may take: a guard against a hang, not a speed target
(they take milliseconds alone, and seconds on a machine busy with other work)."""

AS_ROOT = os.geteuid() == 0
NOBODY = 65534


async def call(session: Session, tool: str, **arguments: Any) -> ToolResult:
    with anyio.fail_after(PROMPT):
        return await session.call(tool, arguments)


def outcome(result: ToolResult) -> tuple[str | None, str]:
    return result.code, result.text


@contextlib.contextmanager
def peak_traced_bytes() -> Iterator[list[int]]:
    """Trace Python allocations (worker threads included); yields [peak] once done."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
        peak.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.local(tmp_path)


@pytest.fixture
def bare(tmp_path: Path) -> Workspace:
    """No observation policy: every call reaches the provider."""
    return Workspace.local(tmp_path, policy=False)


# --- special files ----------------------------------------------------------------------------


def make_special(tmp_path: Path, kind: str, stack: contextlib.ExitStack) -> Path:
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = stack.enter_context(socket.socket(socket.AF_UNIX))
        server.bind(str(path))
        server.listen()
    elif kind in ("zero-node", "urandom-node"):
        # Our own device nodes: a regression could then never replace the real /dev entries.
        minor = 5 if kind == "zero-node" else 9
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    elif kind.startswith("link-to-"):
        target = make_special(tmp_path, kind.removeprefix("link-to-"), stack)
        path.symlink_to(target.name)
    return path


SPECIAL = ["fifo", "socket", "zero-node", "urandom-node", "link-to-fifo", "link-to-zero-node"]


@pytest.mark.parametrize("kind", SPECIAL)
async def test_special_files_are_refused_promptly_by_every_tool(
    tmp_path: Path, bare: Workspace, workspace: Workspace, kind: str
) -> None:
    if "node" in kind and not AS_ROOT:
        pytest.skip("creating device nodes needs root")
    with contextlib.ExitStack() as stack:
        path = make_special(tmp_path, kind, stack)
        kind_before = stat.S_IFMT(os.stat(path).st_mode)
        raw, guarded = bare.session(), workspace.session()
        shown = str(path)
        results = {
            "read": await call(raw, "read", file_path=kind),
            "write": await call(raw, "write", file_path=kind, content="x"),
            "edit": await call(raw, "edit", file_path=kind, old_string="a", new_string="b"),
            "guarded write": await call(guarded, "write", file_path=kind, content="x"),
            "guarded edit": await call(
                guarded, "edit", file_path=kind, old_string="a", new_string="b"
            ),
        }
        assert {name: outcome(r) for name, r in results.items()} == {
            "read": ("FS_NOT_REGULAR_FILE", f'Error: cannot read "{shown}": not a regular file'),
            "write": ("FS_NOT_REGULAR_FILE", f'Error: cannot write "{shown}": not a regular file'),
            "edit": ("FS_NOT_REGULAR_FILE", f'Error: cannot edit "{shown}": not a regular file'),
            # The read failed, so nothing was observed: the policy refuses before any I/O.
            "guarded write": (
                "FS_NOT_REGULAR_FILE",
                f'Error: cannot write "{shown}": not a regular file',
            ),
            "guarded edit": (
                "FS_NOT_OBSERVED",
                f'Error: edit requires reading "{shown}" first — read the file, then retry',
            ),
        }
        assert stat.S_IFMT(os.stat(path).st_mode) == kind_before


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "link-zero", "link-urandom"])
async def test_dev_zero_and_urandom_are_refused_directly_and_through_links(
    tmp_path: Path, bare: Workspace, path: str
) -> None:
    (tmp_path / "link-zero").symlink_to("/dev/zero")
    (tmp_path / "link-urandom").symlink_to("/dev/urandom")
    shown = path if path.startswith("/") else str(tmp_path / path)
    result = await call(bare.session(), "read", file_path=path)
    assert outcome(result) == (
        "FS_NOT_REGULAR_FILE",
        f'Error: cannot read "{shown}": not a regular file',
    )


# --- links -----------------------------------------------------------------------------------


async def test_a_symlink_loop_is_not_found_for_every_tool(tmp_path: Path, bare: Workspace) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    session = bare.session()
    for name in ("loop", "a"):
        shown = tmp_path / name
        results = [
            await call(session, "read", file_path=name),
            await call(session, "write", file_path=name, content="x"),
            await call(session, "edit", file_path=name, old_string="a", new_string="b"),
        ]
        assert [outcome(r) for r in results] == [
            ("FS_NOT_FOUND", f'Error: cannot {verb} "{shown}": too many levels of symbolic links')
            for verb in ("read", "write", "edit")
        ]
        assert (tmp_path / name).is_symlink()


async def test_a_dangling_link_reads_as_absent_and_a_write_creates_its_target(
    tmp_path: Path, workspace: Workspace
) -> None:
    # Documented behaviour (SECURITY.md): the link is kept and its target is created, as
    # with any write through a symlink; missing directories on the way are created too.
    (tmp_path / "dangling").symlink_to("missing/target.txt")
    session = workspace.session()
    shown = tmp_path / "dangling"
    read = await call(session, "read", file_path="dangling")
    edit = await call(session, "edit", file_path="dangling", old_string="a", new_string="b")
    write = await call(session, "write", file_path="dangling", content="made\n")
    assert outcome(read) == ("FS_NOT_FOUND", f'Error: cannot read "{shown}": not found')
    assert outcome(edit) == ("FS_NOT_FOUND", f'Error: cannot edit "{shown}": not found')
    assert not write.is_error
    assert write.value is not None
    assert write.value["operation"] == "create"
    assert os.readlink(shown) == "missing/target.txt"
    assert (tmp_path / "missing" / "target.txt").read_bytes() == b"made\n"


# --- huge files -----------------------------------------------------------------------------


BOUND = 32 * 1024 * 1024
"""Traced-allocation ceiling for calls on multi-gigabyte or 64 MiB files."""


async def test_a_5_gib_sparse_file_fails_fast_as_binary_with_bounded_memory(
    tmp_path: Path, bare: Workspace
) -> None:
    sparse = tmp_path / "sparse.bin"
    with sparse.open("wb") as handle:
        handle.truncate(5 << 30)
    session = bare.session()
    with peak_traced_bytes() as peak:
        read = await call(session, "read", file_path="sparse.bin", offset=3, limit=5)
        edit = await call(session, "edit", file_path="sparse.bin", old_string="a", new_string="b")
    assert outcome(read) == ("FS_NOT_TEXT", f'Error: cannot read "{sparse}": binary file')
    assert outcome(edit) == ("FS_NOT_TEXT", f'Error: cannot edit "{sparse}": binary file')
    assert peak[0] < BOUND, f"{peak[0]} bytes traced"
    assert sparse.stat().st_size == 5 << 30


async def test_a_64_mib_single_line_shows_line_1_truncated_with_bounded_memory(
    tmp_path: Path, workspace: Workspace
) -> None:
    line = tmp_path / "line.txt"
    with line.open("wb") as handle:
        block = b"y" * (1 << 20)
        for _ in range(64):
            handle.write(block)
    session = workspace.session()
    with peak_traced_bytes() as peak:
        read = await call(session, "read", file_path="line.txt")
    assert peak[0] < BOUND, f"{peak[0]} bytes traced"
    assert not read.is_error
    assert read.value is not None
    assert read.value["total_lines"] == 1
    [first] = read.value["lines"]
    assert first["text"] == "y" * 2000 + "... (line truncated to 2000 chars)"


# --- races ------------------------------------------------------------------------------------


async def test_a_file_truncated_and_regrown_while_read_gives_a_result_that_cannot_authorize_an_edit(
    tmp_path: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.txt"
    old = "".join(f"old line {n:06d}\n" for n in range(20_000))  # ~340 KiB: streamed
    new = "".join(f"new line {n:06d}\n" for n in range(30_000))
    path.write_text(old, encoding="utf-8")
    inode = path.stat().st_ino
    monkeypatch.setattr(_local, "STREAM_CHUNK_SIZE", 64 * 1024)
    real_read = os.read
    reads = [0]

    real_preadv = os.preadv

    def rewrite_after_first_read(fd: int) -> None:
        if os.fstat(fd).st_ino == inode:
            reads[0] += 1
            if reads[0] == 1:  # in place, as a logger or `>` would: same inode
                with path.open("r+", encoding="utf-8") as handle:
                    handle.truncate(0)
                    handle.write(new)

    def read_then_rewrite(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        rewrite_after_first_read(fd)
        return data

    def preadv_then_rewrite(fd: int, buffers: list[bytearray], offset: int, *flags: int) -> int:
        count = real_preadv(fd, buffers, offset, *flags)
        rewrite_after_first_read(fd)
        return count

    session = workspace.session()
    # The local stream reads with `os.preadv` (RWF_NOWAIT on the loop) where it can.
    monkeypatch.setattr(os, "read", read_then_rewrite)
    monkeypatch.setattr(os, "preadv", preadv_then_rewrite)
    read = await call(session, "read", file_path="log.txt", limit=3)
    monkeypatch.setattr(os, "read", real_read)
    monkeypatch.setattr(os, "preadv", real_preadv)

    assert not read.is_error, read.text
    assert read.value is not None
    assert [line["text"] for line in read.value["lines"]] == [
        "old line 000000",
        "old line 000001",
        "old line 000002",
    ]
    # A count that mixes the two generations, never an exception; and what was read can't
    # authorize an edit: the version observed before the rewrite is stale now.
    assert read.value["total_lines"] > 0
    edit = await call(
        session, "edit", file_path="log.txt", old_string="new line 000000", new_string="x"
    )
    assert edit.code == "FS_STALE_VERSION"
    assert path.read_text(encoding="utf-8") == new
    reread = await call(session, "read", file_path="log.txt", limit=1)
    assert reread.value is not None
    assert reread.value["total_lines"] == 30_000


def swap_for_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside.txt").write_bytes(b"i")


async def test_a_file_replaced_by_a_directory_mid_call_is_not_a_regular_file(
    tmp_path: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = workspace.session()
    for name in ("r.txt", "w.txt", "e.txt"):
        (tmp_path / name).write_bytes(b"text\n")
        assert not (await call(session, "read", file_path=name)).is_error

    # read: after its stat said "a small file", before the file is opened (the stat a small
    # read takes is the provider's own, in `read_small`, right before its open).
    real_stat = _local.LocalFileSystem._stat

    def stat_then_swap(self: _local.LocalFileSystem, target: Any) -> Any:
        info = real_stat(self, target)
        swap_for_directory(tmp_path / "r.txt")
        return info

    monkeypatch.setattr(_local.LocalFileSystem, "_stat", stat_then_swap)
    read = await call(session, "read", file_path="r.txt")
    monkeypatch.undo()

    # write and edit: after the policy chose the guard, before the provider's critical section.
    async def swap_first(intent: FsIntent, proceed: Next[Any]) -> Any:
        swap_for_directory(tmp_path / Path(intent.target.display_path).name)
        return await proceed()

    events = workspace.context.events
    dispose_write = events.on(FS_WRITE_INTENT, swap_first, prepend=True)
    write = await call(session, "write", file_path="w.txt", content="new\n")
    dispose_write()
    dispose_edit = events.on(FS_EDIT_INTENT, swap_first, prepend=True)
    edit = await call(session, "edit", file_path="e.txt", old_string="text", new_string="t")
    dispose_edit()

    assert [outcome(r) for r in (read, write, edit)] == [
        ("FS_NOT_REGULAR_FILE", f'Error: cannot {verb} "{tmp_path / name}": not a regular file')
        for verb, name in (("read", "r.txt"), ("write", "w.txt"), ("edit", "e.txt"))
    ]
    for name in ("r.txt", "w.txt", "e.txt"):
        assert (tmp_path / name / "inside.txt").read_bytes() == b"i"
    assert sorted(os.listdir(tmp_path)) == ["e.txt", "r.txt", "w.txt"]


# --- permissions ---------------------------------------------------------------------------------

UNPRIVILEGED_AGENT = """
import anyio, json, os, shutil, sys, tempfile
from dsh_fs import Workspace

CALLS = [
    ("read", {"file_path": "secret.txt"}),
    ("write", {"file_path": "locked/new.txt", "content": "x"}),
    ("read", {"file_path": "locked/shared.txt"}),
    ("edit", {"file_path": "locked/shared.txt", "old_string": "shared", "new_string": "x"}),
    ("write", {"file_path": "locked/shared.txt", "content": "x"}),
    ("read", {"file_path": "closed/inner.txt"}),
]

async def main(root, report):
    session = Workspace.local(root).session()
    for tool, arguments in CALLS:
        with anyio.fail_after(60):
            result = await session.call(tool, arguments)
        if report:
            print(json.dumps([result.code, result.text]), flush=True)

# The interpreter lives where nobody may not look (/root/.pyenv), so this child starts as
# root, warms every lazy import on a scratch folder, then drops its ids for good.
scratch = tempfile.mkdtemp()
for name in ("secret.txt", "locked/shared.txt", "closed/inner.txt"):
    os.makedirs(os.path.dirname(os.path.join(scratch, name)), exist_ok=True)
    with open(os.path.join(scratch, name), "w", encoding="utf-8") as handle:
        handle.write("shared\\n")
anyio.run(main, scratch, False)
shutil.rmtree(scratch)
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
anyio.run(main, sys.argv[1], True)
"""


def run_unprivileged(root: Path) -> list[tuple[str | None, str]]:
    """Run the agent in a child that drops to nobody (when root), else as ourselves."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(UNPRIVILEGED_AGENT), str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [tuple(json.loads(line)) for line in done.stdout.splitlines()]


async def test_permission_denied_files_give_exact_errors_and_stay_unchanged() -> None:
    # Not under tmp_path: pytest keeps its root private (0700), which nobody cannot traverse.
    root = Path(tempfile.mkdtemp(prefix="dsh-fs-hostile-"))
    try:
        os.chmod(root, 0o755)
        (root / "secret.txt").write_bytes(b"secret\n")
        (root / "secret.txt").chmod(0o600)
        locked = root / "locked"
        locked.mkdir()
        (locked / "shared.txt").write_bytes(b"shared\n")
        (locked / "shared.txt").chmod(0o644)
        locked.chmod(0o555)
        closed = root / "closed"
        closed.mkdir()
        (closed / "inner.txt").write_bytes(b"inner\n")
        closed.chmod(0o700)
        if not AS_ROOT:
            (root / "secret.txt").chmod(0o000)
            closed.chmod(0o000)
        results = await anyio.to_thread.run_sync(run_unprivileged, root)
        shared = locked / "shared.txt"
        assert results == [
            (
                "FS_PERMISSION_DENIED",
                f'Error: cannot read "{root / "secret.txt"}": permission denied',
            ),
            (
                "FS_PERMISSION_DENIED",
                f'Error: cannot write "{locked / "new.txt"}": permission denied',
            ),
            (
                None,
                f"<path>{shared}</path>\n<type>file</type>\n<content>\n1: shared\n\n"
                "(End of file - total 1 lines)\n</content>",
            ),
            ("FS_PERMISSION_DENIED", f'Error: cannot edit "{shared}": permission denied'),
            ("FS_PERMISSION_DENIED", f'Error: cannot write "{shared}": permission denied'),
            (
                "FS_PERMISSION_DENIED",
                f'Error: cannot read "{closed / "inner.txt"}": permission denied',
            ),
        ]
        assert shared.read_bytes() == b"shared\n"
        assert sorted(os.listdir(locked)) == ["shared.txt"]
    finally:
        for directory in (root / "locked", root / "closed"):
            directory.chmod(0o755)
        shutil.rmtree(root)
