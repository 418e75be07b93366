"""`walk`: every entry below a directory, one directory per batch, links never followed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsFileType, FsWalkEntry
from dsh_fs.fs._contract import walk_by_listing

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def walked(
    put: ProviderUnderTest, rel: str = ".", descend: Callable[[str], bool] | None = None
) -> list[list[FsWalkEntry]]:
    batches: list[list[FsWalkEntry]] = []
    async with put.fs.walk(await put.fs.resolve(rel), descend=descend) as found:
        async for batch in found:
            batches.append(batch)
    return batches


def paths(batches: list[list[FsWalkEntry]]) -> list[str]:
    return [entry.path for batch in batches for entry in batch]


def tree(put: ProviderUnderTest) -> None:
    for rel in ("b/two.txt", "b/c/three.txt", "a.txt", "d/four.txt", "b/c/deeper/five.txt"):
        put.outside.write_bytes(rel, rel.encode())


async def test_a_walk_visits_directories_depth_first_in_name_order(put: ProviderUnderTest) -> None:
    tree(put)
    batches = await walked(put)
    assert [[entry.path for entry in batch] for batch in batches] == [
        ["a.txt", "b", "d"],
        ["b/c", "b/two.txt"],
        ["b/c/deeper", "b/c/three.txt"],
        ["b/c/deeper/five.txt"],
        ["d/four.txt"],
    ]


async def test_a_walk_reports_type_size_and_modification_time_of_files(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("sub/file.txt", b"12345")
    entries = {entry.path: entry for batch in await walked(put) for entry in batch}
    assert entries["sub"].type is FsFileType.DIRECTORY
    file = entries["sub/file.txt"]
    assert (file.type, file.size, file.name) == (FsFileType.FILE, 5, "file.txt")
    assert file.mtime_ns is not None
    assert file.mtime_ns > 0


async def test_a_walk_below_a_subdirectory_gives_paths_relative_to_it(
    put: ProviderUnderTest,
) -> None:
    tree(put)
    assert paths(await walked(put, "b/c")) == ["deeper", "three.txt", "deeper/five.txt"]


async def test_descend_decides_when_the_walk_reaches_a_directory(put: ProviderUnderTest) -> None:
    tree(put)
    asked: list[str] = []

    def descend(path: str) -> bool:
        asked.append(path)
        return path != "b/c"

    found = paths(await walked(put, descend=descend))
    assert found == ["a.txt", "b", "d", "b/c", "b/two.txt", "d/four.txt"]
    assert asked == ["b", "b/c", "d"]


async def test_walking_a_missing_directory_is_not_found(put: ProviderUnderTest) -> None:
    with fails(FsErrorCode.NOT_FOUND, f'cannot search "{put.display("nope")}": not found'):
        await walked(put, "nope")


async def test_walking_a_file_is_not_a_directory(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"x")
    message = f'cannot search "{put.display("a.txt")}": not a directory'
    with fails(FsErrorCode.NOT_DIRECTORY, message):
        await walked(put, "a.txt")


async def test_an_empty_root_yields_nothing(put: ProviderUnderTest) -> None:
    assert await walked(put) == []


async def test_a_walk_never_follows_a_symlink(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    tree(put)
    put.outside.symlink("loop", ".")
    put.outside.symlink("to-b", "b")
    put.outside.symlink("file-link", "a.txt")
    entries = {entry.path: entry for batch in await walked(put) for entry in batch}
    assert {path for path in entries if path.startswith(("loop", "to-b", "file-link"))} == {
        "loop",
        "to-b",
        "file-link",
    }
    assert {entries[name].type for name in ("loop", "to-b", "file-link")} == {FsFileType.SYMLINK}


async def test_a_walk_reports_a_fifo_without_opening_it(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    put.outside.write_bytes("z.txt", b"z")
    entries = {entry.path: entry.type for batch in await walked(put) for entry in batch}
    assert entries == {"pipe": FsFileType.OTHER, "z.txt": FsFileType.FILE}


async def test_a_subdirectory_swapped_for_a_link_mid_walk_is_not_listed(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("d/inner.txt", b"x")
    put.outside.write_bytes("elsewhere/secret.txt", b"s")
    found: list[str] = []
    async with put.fs.walk(await put.fs.resolve("."), descend=lambda p: p != "elsewhere") as it:
        async for batch in it:
            found += [entry.path for entry in batch]
            if any(entry.path == "d" for entry in batch):
                put.outside.remove("d/inner.txt")
                put.outside.remove("d")
                put.outside.symlink("d", "elsewhere")
    assert "d/secret.txt" not in found
    assert "d/inner.txt" not in found


async def test_leaving_the_block_early_stops_the_walk(put: ProviderUnderTest) -> None:
    tree(put)
    async with put.fs.walk(await put.fs.resolve(".")) as batches:
        async for batch in batches:
            assert batch
            break


async def test_the_default_walk_built_from_list_dir_gives_the_same_batches(
    put: ProviderUnderTest,
) -> None:
    tree(put)
    fs = put.fs
    mine = [[(e.path, e.type, e.size) for e in batch] for batch in await walked(put)]
    default: list[list[tuple[str, FsFileType, int]]] = []
    async with walk_by_listing(fs, await fs.resolve("."), None) as batches:
        async for batch in batches:
            default.append([(e.path, e.type, e.size) for e in batch])
            assert all(e.mtime_ns for e in batch if e.type is FsFileType.FILE)
    assert default == mine
