"""Byte-faithful edits through `Session.call`: only the replaced span changes.

Outside the span the file is byte-identical — a UTF-8 BOM, mixed line endings, a missing
final newline, tabs and trailing spaces survive — and the replacement takes the file's
dominant line ending. The mode is kept, and the owner and group when the process may set
them. (What an atomic replace cannot keep, hard links, is shown in
`tests/providers/test_local.py::test_a_write_over_a_hard_link_detaches_it` and documented in
SECURITY.md.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import anyio
import pytest

from dsh_fs import Session, Workspace

pytestmark = pytest.mark.anyio

AS_ROOT = os.geteuid() == 0
NOBODY = 65534


async def read_then_edit(session: Session, name: str, old: str, new: str) -> None:
    with anyio.fail_after(60):
        read = await session.call("read", {"file_path": name})
        assert not read.is_error, read.text
        edit = await session.call("edit", {"file_path": name, "old_string": old, "new_string": new})
    assert not edit.is_error, edit.text


def assert_only_span_changed(before: bytes, after: bytes, old: bytes, new: bytes) -> None:
    """`after` is `before` with its single `old` span replaced by `new`, byte for byte."""
    assert before.count(old) == 1
    start = before.index(old)
    assert after[:start] == before[:start]
    assert after[start : start + len(new)] == new
    assert after[start + len(new) :] == before[start + len(old) :]


CASES = {
    "bom-lf": (b"\xef\xbb\xbfalpha\nbeta\n\tgamma  \n", "beta", "BETA", b"beta", b"BETA"),
    "crlf-no-final-newline": (b"one\r\ntwo\r\nthree", "two", "2", b"two", b"2"),
    "mixed-mostly-crlf": (
        b"a\r\nb\r\nc\nd\r\n\te \t\r\nlast",
        "b\nc",
        "B\nC",
        b"b\r\nc",
        b"B\r\nC",
    ),
    "mixed-mostly-lf": (b"a\nb\r\nc\nd\n", "c\nd", "C\nD\nE", b"c\nd", b"C\nD\nE"),
    "crlf-multiline-replacement": (
        b"\xef\xbb\xbfhead\r\n  body \r\ntail\r\n",
        "body ",
        "body\nmore",
        b"body ",
        b"body\r\nmore",
    ),
    "tabs-and-trailing-spaces": (
        b"def f():\n\treturn 1   \n\t\n  # end \t",
        "return 1",
        "return 2",
        b"return 1",
        b"return 2",
    ),
}


@pytest.mark.parametrize("case", CASES)
async def test_an_edit_changes_only_the_replaced_span(tmp_path: Path, case: str) -> None:
    original, old, new, old_bytes, new_bytes = CASES[case]
    path = tmp_path / "f.txt"
    path.write_bytes(original)
    workspace = Workspace.local(tmp_path)
    await read_then_edit(workspace.session(), "f.txt", old, new)
    assert_only_span_changed(original, path.read_bytes(), old_bytes, new_bytes)


async def test_an_edit_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_bytes(b"#!/bin/sh\necho old\n")
    os.chmod(path, 0o751)
    workspace = Workspace.local(tmp_path)
    await read_then_edit(workspace.session(), "script.sh", "old", "new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert path.read_bytes() == b"#!/bin/sh\necho new\n"


@pytest.mark.skipif(not AS_ROOT, reason="only root may give a file to another user")
async def test_an_edit_by_root_keeps_another_users_ownership(tmp_path: Path) -> None:
    path = tmp_path / "theirs.txt"
    path.write_bytes(b"owned\n")
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o640)
    workspace = Workspace.local(tmp_path)
    await read_then_edit(workspace.session(), "theirs.txt", "owned", "still owned")
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert path.read_bytes() == b"still owned\n"


async def test_an_edit_through_a_hard_link_leaves_the_other_name_with_the_old_bytes(
    tmp_path: Path,
) -> None:
    # What an atomic replace cannot preserve: the edit publishes a new inode under its name.
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    os.link(path, tmp_path / "alias.txt")
    workspace = Workspace.local(tmp_path)
    await read_then_edit(workspace.session(), "a.txt", "old", "new")
    assert path.read_bytes() == b"new\n"
    assert (tmp_path / "alias.txt").read_bytes() == b"old\n"
    assert os.stat(path).st_nlink == 1
