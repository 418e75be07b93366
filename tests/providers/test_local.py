"""Facts only the local provider has: staging, modes, ownership, OS errors, process locks."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsEditRequest, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers._oserrors import os_error
from dsh_fs.providers.local import _publish
from dsh_fs.providers.local._staging import STAGE_PREFIX

pytestmark = pytest.mark.anyio

AS_ROOT = os.geteuid() == 0
NOBODY = 65534


def run_python(code: str, *args: str) -> str:
    """Run `code` in a fresh interpreter; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def real_path(path: Path) -> Path:
    return path.resolve()


@contextmanager
def as_nobody() -> Iterator[None]:
    """Drop the effective ids to nobody (root only), for permission checks root bypasses."""
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


# --- identity and URLs ---------------------------------------------------------------------


async def test_key_is_the_real_path_and_display_is_the_path_as_spelled(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("link/../link/a.txt")
    assert target.display_path == str(tmp_path / "link" / "a.txt")
    real = real_path(tmp_path / "real" / "a.txt")
    assert target.target_key == str(real)
    assert await fs.process_path(target) == target.target_key
    assert await fs.file_url(target) == real.as_uri()


async def test_file_url_percent_encodes_special_characters(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    url = await fs.file_url(await fs.resolve("a b#c%.txt"))
    assert url == real_path(tmp_path / "a b#c%.txt").as_uri()
    assert url.endswith("/a%20b%23c%25.txt")


async def test_default_base_is_the_working_directory_at_construction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fs = LocalFileSystem()
    monkeypatch.chdir("/")
    assert (await fs.resolve("a.txt")).display_path == str(tmp_path / "a.txt")


async def test_a_leading_tilde_is_an_ordinary_name_never_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    fs = LocalFileSystem(tmp_path / "work")
    target = await fs.resolve("~/notes.md")
    assert target.display_path == str(tmp_path / "work" / "~" / "notes.md")
    await fs.write_text(target, "x\n")
    assert (tmp_path / "work" / "~" / "notes.md").read_text(encoding="utf-8") == "x\n"
    assert list(home.iterdir()) == []
    assert (await fs.resolve("~user/a", cwd="~")).display_path == str(
        tmp_path / "work" / "~" / "~user" / "a"
    )


# --- OS error translation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "code", "wording"),
    [
        (errno.ENOENT, FsErrorCode.NOT_FOUND, "not found"),
        (errno.EACCES, FsErrorCode.PERMISSION_DENIED, "permission denied"),
        (errno.EPERM, FsErrorCode.PERMISSION_DENIED, "permission denied"),
        (errno.EROFS, FsErrorCode.PERMISSION_DENIED, "read-only file system"),
        (errno.EISDIR, FsErrorCode.NOT_REGULAR_FILE, "not a regular file"),
        (errno.ELOOP, FsErrorCode.NOT_FOUND, "too many levels of symbolic links"),
        (errno.ENOSPC, FsErrorCode.IO_ERROR, "no space left on device"),
        (errno.EDQUOT, FsErrorCode.IO_ERROR, "disk quota exceeded"),
        (errno.EIO, FsErrorCode.IO_ERROR, "input/output error"),
    ],
)
def test_each_errno_maps_to_one_code_and_a_clear_message(
    number: int, code: FsErrorCode, wording: str
) -> None:
    error = os_error(OSError(number, os.strerror(number)), "write", "/w/a.txt")
    assert (error.code, error.message, error.path) == (
        code,
        f'cannot write "/w/a.txt": {wording}',
        "/w/a.txt",
    )


async def test_a_symlink_loop_is_not_found_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    fs = LocalFileSystem(tmp_path)
    with pytest.raises(FsError) as info:
        await fs.read_text(await fs.resolve("loop"))
    assert info.value.code is FsErrorCode.NOT_FOUND
    assert (
        info.value.message
        == f'cannot read "{tmp_path / "loop"}": too many levels of symbolic links'
    )


async def test_sockets_and_devices_are_refused_promptly(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        (tmp_path / "zero").symlink_to("/dev/zero")
        fs = LocalFileSystem(tmp_path)
        with anyio.fail_after(60):
            for name in ("sock", "zero"):
                with pytest.raises(FsError) as info:
                    await fs.read_text(await fs.resolve(name))
                assert info.value.code is FsErrorCode.NOT_REGULAR_FILE


async def test_permission_denied_is_reported_for_reads_and_writes() -> None:
    # Not under tmp_path: pytest keeps its root private (0700), which nobody cannot traverse.
    root = Path(make_shared_tempdir())
    try:
        secret = root / "secret.txt"
        secret.write_bytes(b"s")
        secret.chmod(0o600)
        locked = root / "locked"
        locked.mkdir()
        (locked / "a.txt").write_bytes(b"a")
        locked.chmod(0o555)
        fs = LocalFileSystem(root)
        seen: list[tuple[FsErrorCode, str]] = []
        with as_nobody() if AS_ROOT else nullcontext():
            for attempt in (
                fs.read_text(await fs.resolve("secret.txt")),
                fs.write_text(await fs.resolve("locked/a.txt"), "x"),
            ):
                with pytest.raises(FsError) as info:
                    await attempt
                seen.append((info.value.code, info.value.message))
        assert seen == [
            (FsErrorCode.PERMISSION_DENIED, f'cannot read "{secret}": permission denied'),
            (
                FsErrorCode.PERMISSION_DENIED,
                f'cannot write "{locked / "a.txt"}": permission denied',
            ),
        ]
        assert (locked / "a.txt").read_bytes() == b"a"
    finally:
        remove_tree(root)


async def test_a_read_only_file_in_a_writable_directory_is_not_replaced() -> None:
    # An atomic replace needs only the directory's permission; dsh-fs asks for the file's,
    # as an in-place write would.
    root = Path(make_shared_tempdir())
    try:
        shared = root / "shared"
        shared.mkdir()
        frozen = shared / "frozen.txt"
        frozen.write_bytes(b"keep me\n")
        frozen.chmod(0o444)
        if AS_ROOT:
            os.chown(shared, NOBODY, NOBODY)
            os.chown(frozen, NOBODY, NOBODY)
        fs = LocalFileSystem(root)
        target = await fs.resolve("shared/frozen.txt")
        seen: list[tuple[FsErrorCode, str]] = []
        with as_nobody() if AS_ROOT else nullcontext():
            for attempt in (
                fs.write_text(target, "replaced\n"),
                fs.edit_text(target, FsEditRequest(old_string="keep", new_string="lose")),
            ):
                with pytest.raises(FsError) as info:
                    await attempt
                seen.append((info.value.code, info.value.message))
        assert seen == [
            (FsErrorCode.PERMISSION_DENIED, f'cannot write "{frozen}": permission denied'),
            (FsErrorCode.PERMISSION_DENIED, f'cannot edit "{frozen}": permission denied'),
        ]
        assert frozen.read_bytes() == b"keep me\n"
        assert sorted(os.listdir(shared)) == ["frozen.txt"]
    finally:
        remove_tree(root)


def make_shared_tempdir() -> str:
    path = tempfile.mkdtemp(prefix="dsh-fs-perm-")
    os.chmod(path, 0o755)
    return path


def remove_tree(root: Path) -> None:
    if (root / "locked").exists():
        (root / "locked").chmod(0o755)
    shutil.rmtree(root)


# --- staging and publication ---------------------------------------------------------------


def spy_on_fsync(monkeypatch: pytest.MonkeyPatch, seen: list[tuple[str, int, int]]) -> None:
    """Record (staging dir name, dir mode, file mode) whenever a regular file is fsynced."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            path = os.readlink(f"/proc/self/fd/{fd}")
            stage = os.path.dirname(path)
            seen.append(
                (
                    os.path.basename(stage),
                    stat.S_IMODE(os.stat(stage).st_mode),
                    stat.S_IMODE(info.st_mode),
                )
            )
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


async def test_staging_is_a_private_hidden_directory_with_an_exclusive_0600_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.isdir("/proc/self/fd"):  # noqa: ASYNC240 - a one-off check
        pytest.skip("needs /proc to name an fd's file")
    monkeypatch.setattr(_publish, "TMPFILE_PUBLICATION", False)  # the staging path's test
    seen: list[tuple[str, int, int]] = []
    spy_on_fsync(monkeypatch, seen)
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "x", CreateIfAbsent())
    await fs.write_text(await fs.resolve("a.txt"), "y")
    (first_dir, dir_mode, file_mode), (second_dir, _, _) = seen
    assert first_dir.startswith(STAGE_PREFIX)
    assert len(first_dir) > len(STAGE_PREFIX) + 6
    assert first_dir != second_dir
    # A new file is fsynced with its final mode already set; the staged mode is 0600 at
    # creation, which the replace below checks through a file whose mode is 0600.
    assert dir_mode == 0o700
    assert file_mode == 0o666 & ~current_umask()
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


async def test_staged_file_is_created_0600_before_its_mode_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_publish, "TMPFILE_PUBLICATION", False)  # the staging path's test
    created: list[int] = []
    real_open = os.open

    def spy_open(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & os.O_CREAT:
            assert flags & os.O_EXCL
            created.append(mode)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", spy_open)
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "x")
    assert created == [0o600]


async def test_new_files_get_the_default_mode_under_the_umask(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "x")
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666 & ~current_umask()


@pytest.mark.skipif(not AS_ROOT, reason="only root can give a file to another owner")
async def test_replacing_keeps_owner_and_group_when_the_process_may_set_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "theirs.txt"
    path.write_bytes(b"old")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o640)
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("theirs.txt"), "new")
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)


async def test_create_if_absent_never_replaces_a_file_that_appears_before_publication(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file appears after the provider's own probe, right before its hard link is made.
    real_link = os.link

    def link_after_a_rival(src: str, dst: str, **kwargs: Any) -> None:
        rival = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, dir_fd=kwargs.get("dst_dir_fd"))
        os.write(rival, b"rival")
        os.close(rival)
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link_after_a_rival)
    fs = LocalFileSystem(tmp_path)
    display = str(tmp_path / "a.txt")
    with pytest.raises(FsError) as info:
        await fs.write_text(await fs.resolve("a.txt"), "mine", CreateIfAbsent())
    assert info.value.code is FsErrorCode.NOT_OBSERVED
    assert info.value.message == f'cannot overwrite existing "{display}" without reading it first'
    assert (tmp_path / "a.txt").read_bytes() == b"rival"
    assert os.listdir(tmp_path) == ["a.txt"]


async def test_create_then_edit_with_the_returned_version_is_not_stale(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    created = await fs.write_text(target, "one\n", CreateIfAbsent())
    info = await fs.stat(target)
    assert info is not None
    assert created.version == info.version
    edited = await fs.edit_text(
        target, FsEditRequest(old_string="one", new_string="two"), created.version
    )
    await fs.write_text(target, "three\n", ReplaceIfVersion(edited.version))
    assert (tmp_path / "a.txt").read_bytes() == b"three\n"


@pytest.mark.parametrize("failing", ["fsync", "replace"])
async def test_an_io_failure_leaves_the_original_intact_and_no_residue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    (tmp_path / "a.txt").write_bytes(b"original\n")
    number = errno.ENOSPC if failing == "fsync" else errno.EIO

    def fail(*_args: object, **_kwargs: object) -> None:
        raise OSError(number, os.strerror(number))

    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    monkeypatch.setattr(os, failing, fail)
    for attempt in (
        fs.write_text(target, "new\n"),
        fs.edit_text(target, FsEditRequest(old_string="original", new_string="new")),
    ):
        with pytest.raises(FsError) as info:
            await attempt
        assert info.value.code is FsErrorCode.IO_ERROR
        wording = "no space left on device" if failing == "fsync" else "input/output error"
        assert info.value.message.endswith(f'"{tmp_path / "a.txt"}": {wording}')
    monkeypatch.undo()
    assert (tmp_path / "a.txt").read_bytes() == b"original\n"
    assert os.listdir(tmp_path) == ["a.txt"]


async def test_a_file_size_limit_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"original\n")
    output = run_python(
        """
        import anyio, resource, sys
        from dsh_fs.errors import FsError
        from dsh_fs.providers import LocalFileSystem

        async def main():
            fs = LocalFileSystem(sys.argv[1])
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            try:
                await fs.write_text(await fs.resolve("a.txt"), "x" * (2 << 20))
            except FsError as error:
                print(error.code.value)

        anyio.run(main)
        """,
        str(tmp_path),
    )
    assert output.strip() == "FS_IO_ERROR"
    assert (tmp_path / "a.txt").read_bytes() == b"original\n"
    assert os.listdir(tmp_path) == ["a.txt"]


async def test_a_write_over_a_hard_link_detaches_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old")
    os.link(tmp_path / "a.txt", tmp_path / "alias.txt")
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "new")
    assert (tmp_path / "a.txt").read_bytes() == b"new"
    assert (tmp_path / "alias.txt").read_bytes() == b"old"


# --- reads -----------------------------------------------------------------------------------


async def test_read_bytes_never_returns_a_file_that_grew_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "grows.bin"
    path.write_bytes(b"12345")
    real_fstat = os.fstat

    def fstat_then_grow(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        with path.open("ab") as more:
            more.write(b"6789")
        return info

    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("grows.bin")
    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    with pytest.raises(FsError) as info:
        await fs.read_bytes(target, 5)
    assert info.value.code is FsErrorCode.TOO_LARGE


async def test_a_stream_cannot_be_read_after_its_block_is_left(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"abc")
    fs = LocalFileSystem(tmp_path)
    async with fs.stream_text(await fs.resolve("a.txt")) as chunks:
        pass
    assert [chunk async for chunk in chunks] == []


# --- locks -----------------------------------------------------------------------------------


async def test_mutation_locks_are_dropped_when_unused(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    async with anyio.create_task_group() as tg:
        for index in range(20):
            tg.start_soon(fs.write_text, await fs.resolve(f"f{index % 4}.txt"), "x")
    assert len(fs._locks) == 0


async def test_a_mutation_waits_for_another_process_holding_the_directory_lock(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_bytes(b"old")
    holder_code = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('L', end='', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    async with await anyio.open_process(
        [sys.executable, "-c", holder_code, str(tmp_path)]
    ) as holder:
        assert holder.stdin is not None
        assert holder.stdout is not None
        with anyio.fail_after(30):
            assert await holder.stdout.receive() == b"L"
        fs = LocalFileSystem(tmp_path)
        target = await fs.resolve("a.txt")
        finished = anyio.Event()

        async def write() -> None:
            await fs.write_text(target, "new")
            finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            # A bounded window in which the write must not get through.
            with anyio.move_on_after(0.3):
                await finished.wait()
            assert not finished.is_set()
            assert (tmp_path / "a.txt").read_bytes() == b"old"
            await holder.stdin.send(b"\n")
            with anyio.fail_after(60):
                await finished.wait()
    assert (tmp_path / "a.txt").read_bytes() == b"new"


INCREMENTER = """
import anyio, sys
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest
from dsh_fs.providers import LocalFileSystem

async def main():
    fs = LocalFileSystem(sys.argv[1])
    target = await fs.resolve("counter.txt")
    done = 0
    while done < int(sys.argv[2]):
        info = await fs.stat(target)
        text = await fs.read_text(target)
        request = FsEditRequest(old_string=text, new_string=str(int(text) + 1))
        try:
            await fs.edit_text(target, request, info.version)
        except FsError as error:
            if error.code not in (FsErrorCode.STALE_VERSION, FsErrorCode.EDIT_NOT_FOUND):
                raise
        else:
            done += 1

anyio.run(main)
"""


async def test_guarded_edits_from_several_processes_lose_no_update(tmp_path: Path) -> None:
    (tmp_path / "counter.txt").write_bytes(b"0")
    processes, increments = 3, 40

    async def run_one() -> None:
        await anyio.run_process(
            [sys.executable, "-c", INCREMENTER, str(tmp_path), str(increments)], check=True
        )

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for _ in range(processes):
                tg.start_soon(run_one)
    assert (tmp_path / "counter.txt").read_bytes() == str(processes * increments).encode()
    assert os.listdir(tmp_path) == ["counter.txt"]


@pytest.mark.skipif(
    sys.platform != "linux"
    or not hasattr(os, "O_TMPFILE")
    or os.environ.get(_publish.PUBLICATION_ENV) == "staging",
    reason="needs O_TMPFILE, and the default publication path",
)
async def test_a_write_publishes_through_an_unnamed_file_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 44: the unnamed file costs what a plain rename costs; the staging directory's
    # mkdir, cross-directory rename and rmdir were a fifth of a 1 MB write.
    made: list[str] = []
    real_mkdir = os.mkdir

    def spy_mkdir(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        made.append(path)
        real_mkdir(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", spy_mkdir)
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "x\n", CreateIfAbsent())
    await fs.write_text(await fs.resolve("a.txt"), "y\n")
    await fs.edit_text(await fs.resolve("a.txt"), FsEditRequest(old_string="y", new_string="z"))
    assert made == []
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "z\n"
