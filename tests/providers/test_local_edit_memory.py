"""A local edit keeps the file's bytes, not its text: the outcome's `before` is the bytes
read, `after` is views of them around the replacement, and neither is decoded until asked.
Wherever the bytes path declines, the text path gives the same file and the same errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import EncodedText, FsEditRequest
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._io import READ_CHUNK_SIZE

pytestmark = pytest.mark.anyio


def edit(old: str, new: str, replace_all: bool = False) -> FsEditRequest:
    return FsEditRequest(old_string=old, new_string=new, replace_all=replace_all)


async def test_an_edit_outcome_holds_bytes_until_its_text_is_asked_for(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes("héllo\nworld\n".encode())
    fs = LocalFileSystem(tmp_path)
    outcome = await fs.edit_text(await fs.resolve("a.txt"), edit("world", "there"))
    before, after = outcome.lazy_before, outcome.lazy_after
    assert isinstance(before, EncodedText)
    assert isinstance(after, EncodedText)
    assert (before.decoded, after.decoded) == (None, None)
    assert [bytes(part) for part in after.parts] == ["héllo\n".encode(), b"there", b"\n"]
    assert (outcome.before, outcome.after) == ("héllo\nworld\n", "héllo\nthere\n")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\nthere\n".encode()


async def test_the_edit_tool_passes_the_bytes_on_and_its_value_decodes_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        result = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}
        )
    assert result.value == {
        "path": str(tmp_path / "a.txt"),
        "before": "one\ntwo\n",
        "after": "one\n2\n",
        "replacements": 1,
        "replace_all": False,
    }


@pytest.mark.parametrize(
    ("content", "request_", "expected"),
    [
        (b"a\r\nb\r\nc\r\n", edit("a\nb", "x\ny"), b"x\r\ny\r\nc\r\n"),  # text path
        (b"a\r\nb\r\nc\r\n", edit("b", "x\ny"), b"a\r\nx\r\ny\r\nc\r\n"),  # bytes path
        (b"\xef\xbb\xbfab ab\n", edit("ab", "c", replace_all=True), b"\xef\xbb\xbfc c\n"),
    ],
)
async def test_both_paths_keep_every_byte_outside_the_match(
    tmp_path: Path, content: bytes, request_: FsEditRequest, expected: bytes
) -> None:
    (tmp_path / "a.txt").write_bytes(content)
    fs = LocalFileSystem(tmp_path)
    outcome = await fs.edit_text(await fs.resolve("a.txt"), request_)
    assert (tmp_path / "a.txt").read_bytes() == expected
    assert outcome.after.encode() == expected


async def test_an_edit_of_a_file_that_turns_binary_late_is_not_text(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    with path.open("wb") as f:
        f.write(b"text\n" * (READ_CHUNK_SIZE // 5))
        f.write(b"\0")
        f.truncate(64 * READ_CHUNK_SIZE)  # a sparse tail of NULs
    fs = LocalFileSystem(tmp_path)
    with pytest.raises(FsError) as binary:
        await fs.edit_text(await fs.resolve("a.txt"), edit("text", "x", replace_all=True))
    assert binary.value.code is FsErrorCode.NOT_TEXT
    assert binary.value.message == f'cannot edit "{path}": binary file'
