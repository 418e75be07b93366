"""`move`, `mkdir`, `delete_dir` and `delete_link` (SPEC §10) on every backend: nothing is
replaced unguarded, a refused call changes nothing, bytes (and modes) survive a move."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsFileType, FsVersion, ReplaceIfVersion

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def version_of(put: ProviderUnderTest, rel: str) -> FsVersion:
    info = await put.fs.stat(await put.fs.resolve(rel))
    assert info is not None
    return info.version


async def move(put: ProviderUnderTest, src: str, dst: str, **guards: object):  # type: ignore[no-untyped-def]
    return await put.fs.move(
        await put.fs.resolve(src),
        await put.fs.resolve(dst),
        **guards,  # type: ignore[arg-type]
    )


async def test_a_file_moves_to_a_new_path_with_its_bytes_and_its_parents_created(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", "héllo\r\nwörld".encode())
    outcome = await move(put, "a.txt", "new/deep/b.txt", expected=await version_of(put, "a.txt"))
    assert outcome.type is FsFileType.FILE
    assert not put.outside.exists("a.txt")
    assert put.outside.read_bytes("new/deep/b.txt") == "héllo\r\nwörld".encode()
    assert outcome.version == await version_of(put, "new/deep/b.txt")


async def test_a_move_onto_an_existing_file_without_a_guard_is_refused_and_keeps_both(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"a\n")
    put.outside.write_bytes("b.txt", b"b\n")
    message = (
        f'cannot move "{put.display("a.txt")}" to "{put.display("b.txt")}": '
        "destination exists; read it first to replace it"
    )
    with fails(FsErrorCode.ALREADY_EXISTS, message):
        await move(put, "a.txt", "b.txt", replace=CreateIfAbsent())
    assert (put.outside.read_bytes("a.txt"), put.outside.read_bytes("b.txt")) == (b"a\n", b"b\n")


async def test_a_move_replaces_a_destination_at_the_version_it_was_read(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"a\n")
    put.outside.write_bytes("b.txt", b"b\n")
    seen = ReplaceIfVersion(await version_of(put, "b.txt"))
    outcome = await move(put, "a.txt", "b.txt", replace=seen)
    assert outcome.replaced
    assert not put.outside.exists("a.txt")
    assert put.outside.read_bytes("b.txt") == b"a\n"


async def test_a_move_onto_a_destination_changed_since_it_was_read_is_stale(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"a\n")
    put.outside.write_bytes("b.txt", b"b\n")
    seen = ReplaceIfVersion(await version_of(put, "b.txt"))
    put.outside.write_bytes("b.txt", b"b\ntheirs\n")
    with fails(FsErrorCode.STALE_VERSION):
        await move(put, "a.txt", "b.txt", replace=seen)
    assert put.outside.read_bytes("a.txt") == b"a\n"
    assert put.outside.read_bytes("b.txt") == b"b\ntheirs\n"


async def test_a_guarded_move_of_a_source_changed_since_is_stale_and_moves_nothing(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"a\n")
    seen = await version_of(put, "a.txt")
    put.outside.write_bytes("a.txt", b"a\ntheirs\n")
    message = f'cannot move "{put.display("a.txt")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await move(put, "a.txt", "b.txt", expected=seen)
    assert not put.outside.exists("b.txt")


async def test_a_move_of_a_missing_source_is_not_found(put: ProviderUnderTest) -> None:
    with fails(FsErrorCode.NOT_FOUND, f'cannot move "{put.display("a.txt")}": not found'):
        await move(put, "a.txt", "b.txt")


async def test_a_move_onto_itself_is_refused(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"a\n")
    with fails(FsErrorCode.ALREADY_EXISTS):
        await move(put, "a.txt", "a.txt", replace=ReplaceIfVersion(await version_of(put, "a.txt")))
    assert put.outside.read_bytes("a.txt") == b"a\n"


async def test_a_directory_moves_as_a_whole(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("pkg/a.txt", b"a\n")
    put.outside.write_bytes("pkg/sub/b.txt", b"b\n")
    outcome = await move(put, "pkg", "lib/pkg2")
    assert outcome.type is FsFileType.DIRECTORY
    assert not put.outside.exists("pkg")
    assert put.outside.read_bytes("lib/pkg2/a.txt") == b"a\n"
    assert put.outside.read_bytes("lib/pkg2/sub/b.txt") == b"b\n"


async def test_a_directory_is_never_moved_into_itself_nor_onto_a_directory(
    put: ProviderUnderTest,
) -> None:
    require(put, "directories")
    put.outside.write_bytes("pkg/a.txt", b"a\n")
    put.outside.mkdir("other")
    with fails(FsErrorCode.PERMISSION_DENIED):
        await move(put, "pkg", "pkg/inner/pkg")
    with fails(FsErrorCode.ALREADY_EXISTS):
        await move(put, "pkg", "other")
    assert not put.outside.exists("pkg/inner")
    assert put.outside.listing("other") == []
    assert put.outside.read_bytes("pkg/a.txt") == b"a\n"


async def test_a_moved_file_keeps_its_mode(put: ProviderUnderTest) -> None:
    require(put, "posix_modes")
    put.outside.write_bytes("run.sh", b"#!/bin/sh\n")
    put.outside.chmod("run.sh", 0o751)
    await move(put, "run.sh", "bin/run.sh")
    assert put.outside.mode("bin/run.sh") == 0o751


async def test_a_fifo_is_not_moved(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    with fails(FsErrorCode.NOT_REGULAR_FILE):
        await move(put, "pipe", "pipe2")
    assert put.outside.exists("pipe")
    assert not put.outside.exists("pipe2")


async def test_a_symlink_moves_itself_and_its_target_stays(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"x\n")
    put.outside.symlink("link.txt", "real.txt")
    outcome = await move(put, "link.txt", "moved.txt")
    assert outcome.type is FsFileType.SYMLINK
    assert put.outside.is_symlink("moved.txt")
    assert put.outside.read_bytes("real.txt") == b"x\n"


async def test_mkdir_creates_a_directory_and_its_parents_and_accepts_an_existing_one(
    put: ProviderUnderTest,
) -> None:
    require(put, "directories")
    target = await put.fs.resolve("a/b/c")
    assert (await put.fs.mkdir(target)).created
    assert put.outside.listing("a/b") == ["c"]
    assert not (await put.fs.mkdir(target)).created
    info = await put.fs.stat(target)
    assert info is not None
    assert info.type is FsFileType.DIRECTORY


async def test_mkdir_over_a_file_is_not_a_directory(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("f.txt", b"x\n")
    message = f'cannot create directory "{put.display("f.txt")}": a file is in the way'
    with fails(FsErrorCode.NOT_DIRECTORY, message):
        await put.fs.mkdir(await put.fs.resolve("f.txt"))
    assert put.outside.read_bytes("f.txt") == b"x\n"


async def test_delete_dir_removes_an_empty_directory_and_refuses_a_full_one(
    put: ProviderUnderTest,
) -> None:
    require(put, "directories")
    put.outside.mkdir("empty")
    put.outside.write_bytes("full/a.txt", b"a\n")
    await put.fs.delete_dir(await put.fs.resolve("empty"))
    assert not put.outside.exists("empty")
    message = f'cannot delete "{put.display("full")}": directory not empty'
    with fails(FsErrorCode.NOT_EMPTY, message):
        await put.fs.delete_dir(await put.fs.resolve("full"))
    assert put.outside.read_bytes("full/a.txt") == b"a\n"


async def test_delete_dir_of_a_file_is_not_a_directory(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"a\n")
    with fails(FsErrorCode.NOT_DIRECTORY):
        await put.fs.delete_dir(await put.fs.resolve("a.txt"))
    assert put.outside.read_bytes("a.txt") == b"a\n"


async def test_delete_link_removes_the_link_and_never_its_target(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"x\n")
    put.outside.symlink("link.txt", "real.txt")
    await put.fs.delete_link(await put.fs.resolve("link.txt"))
    assert not put.outside.exists("link.txt")
    assert put.outside.read_bytes("real.txt") == b"x\n"
    with fails(FsErrorCode.STALE_VERSION):
        await put.fs.delete_link(await put.fs.resolve("real.txt"))
    assert put.outside.read_bytes("real.txt") == b"x\n"
