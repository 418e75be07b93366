"""A file the provider itself published with a NUL in it is binary (SPEC §3) exactly as one
another program wrote: an edit refuses it with the same error and changes nothing, and a
write over it has no `before` text. A write or an edit may put a NUL in (as upstream does);
what the file then holds decides, not who wrote it."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsEditRequest, ReplaceIfVersion

from .backends import ProviderUnderTest, fails

pytestmark = pytest.mark.anyio

LARGE = b"x = 1\n" * 100_000 + b"\0\n"
"""600 KB: past the size a local edit checks as text beside its publication."""


def edit(old: str, new: str) -> FsEditRequest:
    return FsEditRequest(old_string=old, new_string=new, replace_all=False)


@pytest.mark.parametrize("data", [b"alpha\0beta\n", LARGE], ids=["small", "large"])
async def test_an_edit_refuses_a_file_it_wrote_with_a_nul_as_one_written_outside(
    put: ProviderUnderTest, data: bytes
) -> None:
    put.outside.write_bytes("theirs.txt", data)
    ours = await put.fs.resolve("ours.txt")
    written = await put.fs.write_text(ours, data.decode())
    assert put.outside.read_bytes("ours.txt") == data
    for rel, guard in (("theirs.txt", None), ("ours.txt", None), ("ours.txt", written.version)):
        message = f'cannot edit "{put.display(rel)}": binary file'
        with fails(FsErrorCode.NOT_TEXT, message):
            await put.fs.edit_text(await put.fs.resolve(rel), edit("x = 1", "x = 2"), guard)
        assert put.outside.read_bytes(rel) == data
    with fails(FsErrorCode.NOT_TEXT, f'cannot read "{put.display("ours.txt")}": binary file'):
        await put.fs.read_text(ours)


async def test_an_edit_that_adds_a_nul_leaves_a_file_the_next_edit_refuses(
    put: ProviderUnderTest,
) -> None:
    target = await put.fs.resolve("a.py")
    created = await put.fs.write_text(target, "x = 1\ny = 2\n")
    first = await put.fs.edit_text(target, edit("1", "\0"), created.version)
    assert put.outside.read_bytes("a.py") == b"x = \0\ny = 2\n"
    with fails(FsErrorCode.NOT_TEXT, f'cannot edit "{put.display("a.py")}": binary file'):
        await put.fs.edit_text(target, edit("\0", "1"), first.version)
    assert put.outside.read_bytes("a.py") == b"x = \0\ny = 2\n"


async def test_a_write_over_a_file_it_wrote_with_a_nul_has_no_before_text(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("theirs.txt", b"alpha\0beta\n")
    theirs = await put.fs.resolve("theirs.txt")
    ours = await put.fs.resolve("ours.txt")
    created = await put.fs.write_text(ours, "alpha\0beta\n")
    info = await put.fs.stat(theirs)
    assert info is not None
    replaced_theirs = await put.fs.write_text(theirs, "text\n", ReplaceIfVersion(info.version))
    replaced_ours = await put.fs.write_text(ours, "text\n", ReplaceIfVersion(created.version))
    assert (replaced_theirs.before, replaced_ours.before) == (None, None)
    assert put.outside.read_bytes("ours.txt") == b"text\n"
