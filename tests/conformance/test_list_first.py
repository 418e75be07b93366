"""`list_dir_first`: the first children of a directory in name order, and how many it has."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FileSystem, FsDirEntry, FsFileType

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


def shape(entries: tuple[FsDirEntry, ...] | list[FsDirEntry]) -> list[tuple[str, FsFileType, int]]:
    return [(entry.name, entry.type, entry.size) for entry in entries]


def ten_files(put: ProviderUnderTest) -> None:
    # Written out of name order, with sizes that tell them apart.
    for index in (7, 2, 9, 0, 5, 1, 8, 3, 6, 4):
        put.outside.write_bytes(f"d/f{index}.txt", b"x" * index)


async def test_list_dir_first_gives_the_first_entries_by_name_and_the_total(
    put: ProviderUnderTest,
) -> None:
    ten_files(put)
    put.outside.write_bytes("d/sub/inner.txt", b"x")
    listing = await put.fs.list_dir_first(await put.fs.resolve("d"), 3)
    assert shape(listing.entries) == [
        ("f0.txt", FsFileType.FILE, 0),
        ("f1.txt", FsFileType.FILE, 1),
        ("f2.txt", FsFileType.FILE, 2),
    ]
    assert listing.total == 11


async def test_list_dir_first_matches_list_dir_entry_for_entry(put: ProviderUnderTest) -> None:
    ten_files(put)
    put.outside.write_bytes("d/.hidden", b"hh")
    put.outside.write_bytes("d/sub/inner.txt", b"x")
    target = await put.fs.resolve("d")
    whole = await put.fs.list_dir(target)
    for limit in (0, 1, 5, len(whole), len(whole) + 10):
        listing = await put.fs.list_dir_first(target, limit)
        assert list(listing.entries) == whole[:limit]
        assert listing.total == len(whole)


async def test_list_dir_first_of_an_empty_directory_is_empty(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.mkdir("empty")
    listing = await put.fs.list_dir_first(await put.fs.resolve("empty"), 10)
    assert (listing.entries, listing.total) == ((), 0)


async def test_list_dir_first_reports_symlinks_as_symlinks(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("d/real.txt", b"x")
    put.outside.symlink("d/link.txt", "d/real.txt")
    listing = await put.fs.list_dir_first(await put.fs.resolve("d"), 1)
    assert [(e.name, e.type) for e in listing.entries] == [("link.txt", FsFileType.SYMLINK)]
    assert listing.total == 2


async def test_list_dir_first_fails_as_list_dir_does(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"x")
    message = f'cannot list "{put.display("a.txt")}": not a directory'
    with fails(FsErrorCode.NOT_DIRECTORY, message):
        await put.fs.list_dir_first(await put.fs.resolve("a.txt"), 5)
    with fails(FsErrorCode.NOT_FOUND):
        await put.fs.list_dir_first(await put.fs.resolve("missing"), 5)


async def test_list_dir_first_refuses_a_negative_limit(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("d/a.txt", b"x")
    with pytest.raises(ValueError, match="limit"):
        await put.fs.list_dir_first(await put.fs.resolve("d"), -1)


async def test_the_default_built_from_list_dir_gives_the_same_listing(
    put: ProviderUnderTest,
) -> None:
    ten_files(put)
    target = await put.fs.resolve("d")
    mine = await put.fs.list_dir_first(target, 4)
    default = await FileSystem.list_dir_first(put.fs, target, 4)
    assert mine == default
