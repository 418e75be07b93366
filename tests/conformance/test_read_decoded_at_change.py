"""`read_decoded_at` made for a change (`change=`, a change set's staging read): on every
backend the same answer as the plain read, the text at the version observed and None once
another program changed the file; what a wrapper makes of the change is
`tests/fs/test_wrapper_read_for_change.py`'s."""

from __future__ import annotations

from typing import Literal

import pytest

from .backends import ProviderUnderTest

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("change", ["edit", "write", "delete", "move"])
async def test_a_read_for_a_change_answers_as_the_plain_read(
    put: ProviderUnderTest, change: Literal["edit", "write", "delete", "move"]
) -> None:
    put.outside.write_bytes("a.txt", b"\xef\xbb\xbfone\r\ntwo\n")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    decoded = await put.fs.read_decoded_at(target, info.version, change=change)
    assert decoded == await put.fs.read_decoded_at(target, info.version)
    assert decoded is not None
    assert decoded.text == "\ufeffone\r\ntwo\n"
    put.outside.write_bytes("a.txt", b"one\ntwo\nthree\n")
    assert await put.fs.read_decoded_at(target, info.version, change=change) is None
