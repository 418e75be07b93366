"""`stat`, `lstat` and `list_dir`: metadata only, versions that track content."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsFileType

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def test_stat_of_a_missing_file_is_none(put: ProviderUnderTest) -> None:
    assert await put.fs.stat(await put.fs.resolve("missing.txt")) is None


async def test_stat_of_a_file_gives_type_size_and_a_stable_version(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"hello\n")
    target = await put.fs.resolve("a.txt")
    first = await put.fs.stat(target)
    second = await put.fs.stat(target)
    assert first is not None
    assert second is not None
    assert (first.type, first.size) == (FsFileType.FILE, 6)
    assert first.version == second.version


async def test_version_changes_when_the_file_is_rewritten_out_of_band(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"hello\n")
    target = await put.fs.resolve("a.txt")
    before = await put.fs.stat(target)
    put.outside.write_bytes("a.txt", b"hello, world\n")
    after = await put.fs.stat(target)
    assert before is not None
    assert after is not None
    assert before.version != after.version


async def test_stat_of_a_directory_says_directory(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.mkdir("d")
    info = await put.fs.stat(await put.fs.resolve("d"))
    assert info is not None
    assert info.type is FsFileType.DIRECTORY


async def test_stat_through_a_file_names_nothing(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"x")
    message = (
        f'cannot resolve "{put.display("a.txt/inner")}": a parent path segment is not a directory'
    )
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.stat(await put.fs.resolve("a.txt/inner"))


async def test_stat_of_a_fifo_says_other(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    info = await put.fs.stat(await put.fs.resolve("pipe"))
    assert info is not None
    assert info.type is FsFileType.OTHER


async def test_stat_follows_a_symlink(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"12345")
    put.outside.symlink("link.txt", "real.txt")
    info = await put.fs.stat(await put.fs.resolve("link.txt"))
    real = await put.fs.stat(await put.fs.resolve("real.txt"))
    assert info is not None
    assert info == real


async def test_lstat_reports_a_symlink_without_following_it(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"12345")
    put.outside.symlink("link.txt", "real.txt")
    info = await put.fs.lstat("link.txt")
    assert info is not None
    assert info.type is FsFileType.SYMLINK
    assert info.display_path == put.display("link.txt")
    assert info.link_target == "real.txt"


async def test_lstat_of_a_regular_file_and_of_nothing(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("sub/a.txt", b"12345")
    info = await put.fs.lstat("a.txt", cwd=put.display("sub"))
    assert info is not None
    assert (info.type, info.size, info.link_target) == (FsFileType.FILE, 5, None)
    assert await put.fs.lstat("missing.txt") is None


async def test_list_dir_gives_children_sorted_by_name_with_types(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("d/b.txt", b"bb")
    put.outside.write_bytes("d/a.txt", b"a")
    put.outside.write_bytes("d/c/inner.txt", b"x")
    entries = await put.fs.list_dir(await put.fs.resolve("d"))
    assert [e.name for e in entries] == ["a.txt", "b.txt", "c"]
    assert [e.type for e in entries] == [FsFileType.FILE, FsFileType.FILE, FsFileType.DIRECTORY]
    assert [e.size for e in entries[:2]] == [1, 2]


async def test_list_dir_reports_symlinks_as_symlinks(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("d/real.txt", b"x")
    put.outside.symlink("d/link.txt", "d/real.txt")
    entries = await put.fs.list_dir(await put.fs.resolve("d"))
    assert [(e.name, e.type) for e in entries] == [
        ("link.txt", FsFileType.SYMLINK),
        ("real.txt", FsFileType.FILE),
    ]


async def test_list_dir_of_a_file_is_not_a_directory(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"x")
    message = f'cannot list "{put.display("a.txt")}": not a directory'
    with fails(FsErrorCode.NOT_DIRECTORY, message):
        await put.fs.list_dir(await put.fs.resolve("a.txt"))


async def test_list_dir_of_a_missing_directory_is_not_found(put: ProviderUnderTest) -> None:
    require(put, "directories")
    with fails(FsErrorCode.NOT_FOUND):
        await put.fs.list_dir(await put.fs.resolve("missing"))
