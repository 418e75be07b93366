"""`read_decoded_at`: a change set's staging read. The text when the file is still at the
version asked, None once another program changed it; on every backend (the local one by
its own implementation, the object stores by the contract's default)."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def test_the_text_at_the_version_observed(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"\xef\xbb\xbfone\r\ntwo\n")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    decoded = await put.fs.read_decoded_at(target, info.version)
    assert decoded is not None
    assert decoded.text == "\ufeffone\r\ntwo\n"
    assert decoded.encoding.bom


async def test_none_once_another_program_changed_the_file(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"one\n")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    put.outside.write_bytes("a.txt", b"one\ntwo\n")
    assert await put.fs.read_decoded_at(target, info.version) is None
    again = await put.fs.stat(target)
    assert again is not None
    decoded = await put.fs.read_decoded_at(target, again.version)
    assert decoded is not None
    assert decoded.text == "one\ntwo\n"


async def test_none_once_the_file_is_gone(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"one\n")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    put.outside.remove("a.txt")
    assert await put.fs.read_decoded_at(target, info.version) is None


async def test_a_directory_is_not_a_regular_file(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("d/a.txt", b"one\n")
    target = await put.fs.resolve("d")
    info = await put.fs.stat(target)
    assert info is not None
    with fails(
        FsErrorCode.NOT_REGULAR_FILE, f'cannot read "{put.display("d")}": not a regular file'
    ):
        await put.fs.read_decoded_at(target, info.version)
