"""Lookups the kernel confines (`openat2`): what it refuses, and that the fence refuses the same
paths whether the kernel looks them up or the portable walk does.

The kernel's lookup is a fast path: `kernel_path` resolves an existing path in one open, and
`still_real` checks in one call that a key the fence resolved earlier has no link on its way
now. Whatever the kernel refuses (a magic link, a link where none may be, ``..`` out of the
directory) falls back to the walk, so the sandbox's answers are the same both ways
(`platform_paths` runs each fence test natively and with the portable paths forced).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_fs import _platform
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.providers import SandboxFileSystem
from dsh_fs.providers.local._realpath import (
    Resolved,
    kernel_path,
    real_path,
    resolve_path,
    still_real,
)

pytestmark = pytest.mark.anyio

SECRET = "OUTSIDE-SECRET\n"


def _kernel_confines() -> bool:
    try:
        fd = _platform.open_confined("/", os.O_RDONLY, _platform.RESOLVE_NO_MAGICLINKS)
    except OSError:
        return False
    if fd is None:
        return False
    os.close(fd)
    return True


native_only = pytest.mark.skipif(not _kernel_confines(), reason="no openat2 here (Linux 5.6+)")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """``root/`` (a file, a directory, a link out to ``outside/``) beside ``outside/secret.txt``."""
    top = tmp_path.resolve()
    (top / "root" / "dir").mkdir(parents=True)
    (top / "root" / "dir" / "inside.txt").write_text("inside\n", encoding="utf-8")
    (top / "outside").mkdir()
    (top / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    (top / "root" / "out").symlink_to(top / "outside", target_is_directory=True)
    return top


@pytest.fixture
def outside_fd(world: Path) -> Iterator[int]:
    """A descriptor of the outside file: ``/proc/self/fd/N`` is a magic link to it."""
    fd = os.open(world / "outside" / "secret.txt", os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


# --- the kernel's refusals ----------------------------------------------------------------


@native_only
def test_openat2_beneath_a_directory_refuses_a_link_out_dotdot_and_an_absolute_path(
    world: Path,
) -> None:
    root = os.open(world / "root", os.O_PATH | os.O_DIRECTORY)
    try:
        beneath = _platform.RESOLVE_BENEATH | _platform.RESOLVE_NO_MAGICLINKS
        fd = _platform.open_confined("dir/inside.txt", os.O_PATH, beneath, dir_fd=root)
        assert fd is not None
        os.close(fd)
        for escape in ("out/secret.txt", "../outside/secret.txt", str(world / "outside")):
            with pytest.raises(OSError, match="Invalid cross-device link") as caught:
                _platform.open_confined(escape, os.O_PATH, beneath, dir_fd=root)
            assert caught.value.errno == errno.EXDEV, escape
    finally:
        os.close(root)


@native_only
def test_openat2_refuses_a_magic_link_and_a_link_where_none_may_be(
    world: Path, outside_fd: int
) -> None:
    with pytest.raises(OSError, match="Too many levels of symbolic links") as caught:
        _platform.open_confined(
            f"/proc/self/fd/{outside_fd}", os.O_PATH, _platform.RESOLVE_NO_MAGICLINKS
        )
    assert caught.value.errno == errno.ELOOP
    with pytest.raises(OSError, match="Too many levels of symbolic links") as caught:
        _platform.open_confined(
            str(world / "root" / "out" / "secret.txt"),
            os.O_PATH,
            _platform.RESOLVE_NO_SYMLINKS,
        )
    assert caught.value.errno == errno.ELOOP


@native_only
def test_the_kernel_resolves_an_existing_path_as_the_walk_does_and_leaves_magic_links_to_it(
    world: Path, outside_fd: int
) -> None:
    through_link = str(world / "root" / "out" / "secret.txt")
    dotdot = str(world / "root" / "dir" / ".." / ".." / "outside" / "secret.txt")
    for path in (through_link, dotdot, str(world / "root" / "dir")):
        assert kernel_path(path) == os.path.realpath(path)
    # A magic link, a missing file, a path below a file: the kernel does not answer, the
    # walk does (as it always did).
    assert kernel_path(f"/proc/self/fd/{outside_fd}") is None
    assert kernel_path(str(world / "root" / "missing.txt")) is None
    assert kernel_path(str(world / "root" / "dir" / "inside.txt" / "x")) is None
    assert real_path(str(world / "root" / "missing.txt")) == str(world / "root" / "missing.txt")


@native_only
def test_a_key_is_still_real_only_while_no_link_lies_on_its_way(
    world: Path, outside_fd: int
) -> None:
    key = str(world / "root" / "dir" / "inside.txt")
    assert still_real(key)
    assert not still_real(str(world / "root" / "out" / "secret.txt"))  # a link on the way
    assert not still_real(str(world / "root" / "out"))  # the last component is the link
    assert not still_real(f"/proc/self/fd/{outside_fd}")  # a magic link
    assert not still_real(str(world / "root" / "dir" / ".." / "dir"))  # not canonical
    assert not still_real(str(world / "root" / "missing.txt"))
    # The directory swapped for a link (to the outside) since the key was resolved.
    os.rename(world / "root" / "dir", world / "root" / "moved")
    (world / "root" / "dir").symlink_to(world / "outside", target_is_directory=True)
    assert not still_real(key)


@native_only
def test_a_path_without_links_resolves_to_itself_and_any_other_spelling_as_the_walk_says(
    world: Path,
) -> None:
    # One `openat2` answers a link-free path; a spelling that is not canonical (a trailing
    # slash, a relative path) is never taken for its own answer.
    key = str(world / "root" / "dir" / "inside.txt")
    assert resolve_path(key) == Resolved(path=key, failed=0)
    directory = str(world / "root" / "dir")
    assert not still_real(directory + "/")
    assert resolve_path(directory + "/") == Resolved(path=directory, failed=0)
    assert not still_real("root/dir")
    assert resolve_path(str(world / "root" / "out" / "secret.txt")).path == str(
        world / "outside" / "secret.txt"
    )


@pytest.mark.usefixtures("platform_paths")
def test_a_path_with_a_nul_byte_is_never_cut_short_at_it(world: Path) -> None:
    # A C string would end at the NUL, naming the existing directory before it.
    spelled = str(world / "root" / "dir") + "\0/../../outside/secret.txt"
    with pytest.raises(ValueError, match="embedded null byte"):
        _platform.open_confined(spelled, os.O_PATH, _platform.RESOLVE_NO_MAGICLINKS)
    assert kernel_path(spelled) is None
    assert not still_real(spelled)
    # The walk's own os calls refuse it (3.13 says "embedded null character in path").
    with pytest.raises(ValueError, match=r"embedded null (byte|character)"):
        real_path(spelled)


def test_without_openat2_the_walk_answers_every_lookup(
    world: Path, outside_fd: int, portable: None
) -> None:
    key = str(world / "root" / "dir" / "inside.txt")
    assert _platform.open_confined(key, os.O_PATH, _platform.RESOLVE_NO_SYMLINKS) is None
    assert kernel_path(key) is None
    assert not still_real(key)
    assert real_path(key) == key
    assert real_path(str(world / "root" / "out" / "secret.txt")) == str(
        world / "outside" / "secret.txt"
    )


# --- the fence refuses the same paths both ways ---------------------------------------------


@pytest.mark.usefixtures("platform_paths")
async def test_the_sandbox_refuses_a_link_out_of_the_root_dotdot_and_a_magic_link(
    world: Path, outside_fd: int
) -> None:
    (world / "root" / "magic").symlink_to(f"/proc/self/fd/{outside_fd}")
    fs = SandboxFileSystem([world / "root"])
    for path in (
        "out/secret.txt",
        "../outside/secret.txt",
        "dir/../../outside/secret.txt",
        f"/proc/self/fd/{outside_fd}",
        f"/proc/self/root{world}/outside/secret.txt",
        "magic",
    ):
        target = await fs.resolve(path)
        with pytest.raises(FsError) as caught:
            await fs.stat(target)
        assert caught.value.code is FsErrorCode.SANDBOX_DENIED, path
        with pytest.raises(FsError) as caught:
            await fs.read_text(target)
        assert caught.value.code is FsErrorCode.SANDBOX_DENIED, path
        assert "outside the sandbox" in caught.value.message
    target = await fs.resolve("dir/inside.txt")
    assert await fs.read_text(target) == "inside\n"


@pytest.mark.usefixtures("platform_paths")
async def test_a_key_whose_directory_became_a_link_out_is_refused_at_the_next_check(
    world: Path,
) -> None:
    fs = SandboxFileSystem([world / "root"])
    target = await fs.resolve("dir/inside.txt")
    assert await fs.stat(target) is not None
    # Swapped after the resolve: the key's directory now leads outside.
    os.rename(world / "root" / "dir", world / "root" / "moved")
    (world / "outside" / "inside.txt").write_text(SECRET, encoding="utf-8")
    (world / "root" / "dir").symlink_to(world / "outside", target_is_directory=True)
    for check in (fs.stat(target), fs.read_text(target)):
        with pytest.raises(FsError) as caught:
            await check
        assert caught.value.code is FsErrorCode.SANDBOX_DENIED
