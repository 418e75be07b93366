"""`delete`: one critical section — version check, then the removal; never a stray success."""

from __future__ import annotations

import os

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsVersion

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def version_of(put: ProviderUnderTest, rel: str) -> FsVersion:
    info = await put.fs.stat(await put.fs.resolve(rel))
    assert info is not None
    return info.version


async def test_guarded_delete_at_the_current_version_removes_the_file(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    outcome = await put.fs.delete(await put.fs.resolve("a.py"), version)
    assert outcome.version == version
    assert not put.outside.exists("a.py")
    assert await put.fs.stat(await put.fs.resolve("a.py")) is None


async def test_unguarded_delete_removes_whatever_file_is_there(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    await put.fs.delete(await put.fs.resolve("a.py"))
    assert not put.outside.exists("a.py")


async def test_guarded_delete_of_a_file_changed_since_is_stale_and_keeps_it(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    put.outside.write_bytes("a.py", b"x = 1\n# theirs\n")
    message = f'cannot delete "{put.display("a.py")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.delete(await put.fs.resolve("a.py"), version)
    assert put.outside.read_bytes("a.py") == b"x = 1\n# theirs\n"


async def test_guarded_delete_of_a_file_removed_since_is_stale(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    put.outside.remove("a.py")
    message = f'cannot delete "{put.display("a.py")}": file no longer exists'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.delete(await put.fs.resolve("a.py"), version)
    with fails(FsErrorCode.STALE_VERSION):
        await put.fs.delete(await put.fs.resolve("no/such/dir.py"), version)


async def test_unguarded_delete_of_a_missing_file_is_not_found(put: ProviderUnderTest) -> None:
    message = f'cannot delete "{put.display("a.py")}": not found'
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.delete(await put.fs.resolve("a.py"))


async def test_delete_of_a_directory_is_refused_and_keeps_it(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("pkg/a.py", b"x = 1\n")
    with fails(FsErrorCode.NOT_REGULAR_FILE):
        await put.fs.delete(await put.fs.resolve("pkg"))
    assert put.outside.read_bytes("pkg/a.py") == b"x = 1\n"


async def test_delete_keeps_the_siblings_and_leaves_no_residue(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"a\n")
    put.outside.write_bytes("b.py", b"b\n")
    await put.fs.delete(await put.fs.resolve("a.py"), await version_of(put, "a.py"))
    assert put.outside.listing() == ["b.py"]


async def test_delete_through_a_symlink_removes_the_link_not_its_target(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.py", b"x = 1\n")
    put.outside.symlink("link.py", "real.py")
    version = await version_of(put, "link.py")
    await put.fs.delete(await put.fs.resolve("link.py"), version)
    assert not put.outside.exists("link.py")
    assert put.outside.read_bytes("real.py") == b"x = 1\n"


async def test_delete_of_a_read_only_file_is_refused(put: ProviderUnderTest) -> None:
    require(put, "posix_modes")
    put.outside.write_bytes("a.py", b"x = 1\n")
    put.outside.chmod("a.py", 0o444)
    if os.geteuid() == 0:
        pytest.skip("root may write any file")
    with fails(FsErrorCode.PERMISSION_DENIED):
        await put.fs.delete(await put.fs.resolve("a.py"))
    assert put.outside.read_bytes("a.py") == b"x = 1\n"


async def test_a_created_file_can_be_deleted_at_the_version_the_write_returned(
    put: ProviderUnderTest,
) -> None:
    target = await put.fs.resolve("new.py")
    outcome = await put.fs.write_text(target, "x = 1\n")
    await put.fs.delete(target, outcome.version)
    assert not put.outside.exists("new.py")
