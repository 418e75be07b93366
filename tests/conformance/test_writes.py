"""`write_text`: atomic create/replace and both guards, checked against storage."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsVersion, ReplaceIfVersion

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def test_unguarded_write_creates_a_file(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("new.txt")
    outcome = await put.fs.write_text(target, "héllo\n")
    assert put.outside.read_bytes("new.txt") == "héllo\n".encode()
    assert (outcome.operation, outcome.before, outcome.after) == ("create", None, "héllo\n")
    info = await put.fs.stat(target)
    assert info is not None
    assert info.version == outcome.version


async def test_unguarded_write_replaces_a_file_and_reports_the_prior_text(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"old\n")
    outcome = await put.fs.write_text(await put.fs.resolve("a.txt"), "new\n")
    assert put.outside.read_bytes("a.txt") == b"new\n"
    assert (outcome.operation, outcome.before, outcome.after) == ("update", "old\n", "new\n")


async def test_write_keeps_the_content_byte_for_byte(put: ProviderUnderTest) -> None:
    text = "\ufeffCRLF\r\nLF\nlone CR\r tabs\t and trailing spaces   "
    await put.fs.write_text(await put.fs.resolve("exact.txt"), text)
    assert put.outside.read_bytes("exact.txt") == text.encode()


async def test_write_creates_missing_parent_directories(put: ProviderUnderTest) -> None:
    await put.fs.write_text(await put.fs.resolve("deep/er/new.txt"), "x")
    assert put.outside.read_bytes("deep/er/new.txt") == b"x"


async def test_write_of_an_unencodable_string_is_not_text(put: ProviderUnderTest) -> None:
    message = f'cannot write "{put.display("s.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await put.fs.write_text(await put.fs.resolve("s.txt"), "lone \ud800 surrogate")
    assert not put.outside.exists("s.txt")


async def test_create_if_absent_creates_a_missing_file(put: ProviderUnderTest) -> None:
    outcome = await put.fs.write_text(await put.fs.resolve("new.txt"), "x", CreateIfAbsent())
    assert outcome.operation == "create"
    assert put.outside.read_bytes("new.txt") == b"x"


async def test_create_if_absent_refuses_an_existing_file(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"theirs")
    message = f'cannot overwrite existing "{put.display("a.txt")}" without reading it first'
    with fails(FsErrorCode.NOT_OBSERVED, message):
        await put.fs.write_text(await put.fs.resolve("a.txt"), "mine", CreateIfAbsent())
    assert put.outside.read_bytes("a.txt") == b"theirs"


async def test_create_if_absent_loses_to_a_file_created_after_the_probe(
    put: ProviderUnderTest,
) -> None:
    target = await put.fs.resolve("a.txt")
    assert await put.fs.stat(target) is None
    put.outside.write_bytes("a.txt", b"theirs")
    with fails(FsErrorCode.NOT_OBSERVED):
        await put.fs.write_text(target, "mine", CreateIfAbsent())
    assert put.outside.read_bytes("a.txt") == b"theirs"


async def test_replace_if_version_replaces_the_observed_version(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"old")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    outcome = await put.fs.write_text(target, "new", ReplaceIfVersion(info.version))
    assert (outcome.operation, outcome.before) == ("update", "old")
    assert put.outside.read_bytes("a.txt") == b"new"


async def test_replace_if_version_refuses_a_file_changed_since(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"old")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    put.outside.write_bytes("a.txt", b"theirs, longer")
    message = f'cannot write "{put.display("a.txt")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.write_text(target, "mine", ReplaceIfVersion(info.version))
    assert put.outside.read_bytes("a.txt") == b"theirs, longer"


async def test_replace_if_version_refuses_a_file_gone_since(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"old")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    put.outside.remove("a.txt")
    message = f'cannot write "{put.display("a.txt")}": file no longer exists'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.write_text(target, "mine", ReplaceIfVersion(info.version))
    assert not put.outside.exists("a.txt")


async def test_replace_if_version_refuses_a_version_never_minted(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"old")
    with fails(FsErrorCode.STALE_VERSION):
        await put.fs.write_text(
            await put.fs.resolve("a.txt"), "mine", ReplaceIfVersion(FsVersion("bogus"))
        )
    assert put.outside.read_bytes("a.txt") == b"old"


async def test_returned_version_guards_the_next_write(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("a.txt")
    first = await put.fs.write_text(target, "one", CreateIfAbsent())
    second = await put.fs.write_text(target, "two", ReplaceIfVersion(first.version))
    await put.fs.write_text(target, "three", ReplaceIfVersion(second.version))
    assert put.outside.read_bytes("a.txt") == b"three"


async def test_write_onto_a_directory_is_not_a_regular_file(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.mkdir("d")
    message = f'cannot write "{put.display("d")}": not a regular file'
    with fails(FsErrorCode.NOT_REGULAR_FILE, message):
        await put.fs.write_text(await put.fs.resolve("d"), "x")


async def test_write_onto_a_fifo_is_refused_promptly(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    message = f'cannot write "{put.display("pipe")}": not a regular file'
    with anyio.fail_after(60), fails(FsErrorCode.NOT_REGULAR_FILE, message):
        await put.fs.write_text(await put.fs.resolve("pipe"), "x")


async def test_write_under_a_file_names_nothing(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"x")
    message = (
        f'cannot resolve "{put.display("a.txt/inner.txt")}": '
        "a parent path segment is not a directory"
    )
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.write_text(await put.fs.resolve("a.txt/inner.txt"), "y")
    assert put.outside.read_bytes("a.txt") == b"x"


async def test_write_through_a_symlink_lands_on_the_target_and_keeps_the_link(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"old")
    put.outside.symlink("link.txt", "real.txt")
    target = await put.fs.resolve("link.txt")
    info = await put.fs.stat(target)
    assert info is not None
    await put.fs.write_text(target, "new", ReplaceIfVersion(info.version))
    assert put.outside.is_symlink("link.txt")
    assert put.outside.read_bytes("real.txt") == b"new"


async def test_write_through_a_dangling_symlink_creates_its_target(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.symlink("link.txt", "real.txt")
    await put.fs.write_text(await put.fs.resolve("link.txt"), "new", CreateIfAbsent())
    assert put.outside.is_symlink("link.txt")
    assert put.outside.read_bytes("real.txt") == b"new"


async def test_replacing_a_file_keeps_its_mode(put: ProviderUnderTest) -> None:
    require(put, "posix_modes")
    put.outside.write_bytes("run.sh", b"#!/bin/sh\n")
    put.outside.chmod("run.sh", 0o751)
    await put.fs.write_text(await put.fs.resolve("run.sh"), "#!/bin/sh\necho hi\n")
    assert put.outside.mode("run.sh") == 0o751


async def test_write_leaves_no_residue_next_to_the_file(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("d/a.txt", b"old")
    await put.fs.write_text(await put.fs.resolve("d/a.txt"), "new")
    await put.fs.write_text(await put.fs.resolve("d/b.txt"), "new", CreateIfAbsent())
    with fails(FsErrorCode.NOT_OBSERVED):
        await put.fs.write_text(await put.fs.resolve("d/a.txt"), "x", CreateIfAbsent())
    assert put.outside.listing("d") == ["a.txt", "b.txt"]
