"""`edit_files` where a red team found it apart from `edit` (SPEC §13: each edit as `edit`
would take it, every edit checked before anything is written, and no file changes):

- a touch or an identical rewrite after the read is not stale, as for `edit`, `write`,
  `delete` and `move` (the README's promise), while a real change still is;
- a new_string the file cannot hold (a lone surrogate in UTF-8, a character its declared
  codec lacks) is refused with the message `edit` gives, before any file is published:
  the journal, which records every publication and every roll-back, stays empty;
- a file the fence keeps from changes (while reads may leave it), a read-only sandbox, a
  file that is not text: refused at staging, in `edit`'s words, before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Session, ToolResult, Workspace

pytestmark = pytest.mark.anyio

STALE_REMEDY = " \u2014 re-read the file, then retry"


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def one(path: Path, old: str, new: str) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": old, "new_string": new}


async def edit_files(session: Session, *edits: dict[str, Any]) -> ToolResult:
    return await session.call("edit_files", {"edits": list(edits)})


def touch(path: Path) -> None:
    """Another program touching the file: new timestamps, the same bytes."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns + 10**9, info.st_mtime_ns + 10**9))


def rewrite_identical(path: Path) -> None:
    """Another program replacing the file with the bytes it holds (a new inode)."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)


def rewrite_same_size(path: Path) -> None:
    """Another program replacing the file with other bytes of the same size."""
    path.write_bytes(path.read_bytes().upper())


@pytest.mark.parametrize("change", [touch, rewrite_identical], ids=["touch", "identical"])
@pytest.mark.parametrize("journal", [False, True], ids=["plain", "journaled"])
async def test_a_touch_or_an_identical_rewrite_after_the_read_is_not_stale(
    tmp_path: Path, change: Any, journal: bool
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    a, b = root / "a.py", root / "b.py"
    a.write_text("alpha = 1\n", encoding="utf-8")
    b.write_text("beta = alpha\n", encoding="utf-8")
    store = tmp_path / "journal" if journal else None
    async with Workspace.sandbox(root, journal=store) as workspace:
        session = workspace.session()
        for path in (a, b):
            ok(await session.call("read", {"file_path": str(path)}))
        change(a)
        change(b)
        result = ok(await edit_files(session, one(a, "alpha", "first"), one(b, "alpha", "first")))
    assert result.text == f"Edited 2 files (2 replacements)\n- {a}\n- {b}"
    assert a.read_text(encoding="utf-8") == "first = 1\n"
    assert b.read_text(encoding="utf-8") == "beta = first\n"


async def test_a_touch_then_a_same_size_rewrite_is_still_stale(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("alpha = 1\n", encoding="utf-8")
    async with Workspace.sandbox(tmp_path) as workspace:
        session = workspace.session()
        ok(await session.call("read", {"file_path": str(a)}))
        touch(a)
        rewrite_same_size(a)
        result = await edit_files(session, one(a, "ALPHA", "first"))
    assert result.code == "FS_STALE_VERSION"
    assert result.text == (
        f'Error: edit 1 of 1 ("{a}"): cannot edit "{a}": file changed since it was read'
        + STALE_REMEDY
    )
    assert a.read_text(encoding="utf-8") == "ALPHA = 1\n"


async def test_a_set_that_deletes_or_replaces_a_touched_file_publishes_it(tmp_path: Path) -> None:
    # `patch_files` (the dialects' change sets): a delete takes the delete-intent's guard,
    # a whole-file replacement the write-intent's, as `delete` and `write` do: a touch is
    # no change.
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one\n", encoding="utf-8")
    b.write_text("two\n", encoding="utf-8")
    async with Workspace.sandbox(tmp_path) as workspace:
        session = workspace.session()
        for path in (a, b):
            ok(await session.call("read", {"file_path": str(path)}))
        touch(a)
        touch(b)
        patches = [{"file_path": str(a), "delete": True}, {"file_path": str(b), "content": "TWO\n"}]
        ok(await session.call("patch_files", {"patches": patches}, internal=True))
    assert not a.exists()
    assert b.read_text(encoding="utf-8") == "TWO\n"


async def test_a_lone_surrogate_is_refused_as_edit_refuses_it_and_nothing_is_published(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    a, b = root / "a.txt", root / "b.txt"
    a.write_text("hello\n", encoding="utf-8")
    b.write_text("world\n", encoding="utf-8")
    async with Workspace.sandbox(root, journal=tmp_path / "journal") as workspace:
        session = workspace.session()
        for path in (a, b):
            ok(await session.call("read", {"file_path": str(path)}))
        alone = await session.call("edit", one(b, "world", "wor\ud83dld"))
        result = await edit_files(session, one(a, "hello", "HELLO"), one(b, "world", "wor\ud83dld"))
        assert workspace.journal is not None
        entries = await workspace.journal.entries()
    assert alone.code == result.code == "FS_NOT_TEXT"
    assert alone.text == f'Error: cannot edit "{b}": invalid UTF-8 text'
    assert result.text == f'Error: edit 2 of 2 ("{b}"): cannot edit "{b}": invalid UTF-8 text'
    assert (a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")) == ("hello\n", "world\n")
    assert entries == []


async def test_a_character_the_declared_codec_lacks_is_refused_before_any_file_is_published(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    (root / "legacy").mkdir(parents=True)
    a, c = root / "a.txt", root / "legacy" / "c.txt"
    a.write_text("alpha\n", encoding="utf-8")
    c.write_bytes("caf\u00e9 other\n".encode("cp1252"))
    async with Workspace.sandbox(
        root, journal=tmp_path / "journal", encodings={"legacy/*": "cp1252"}
    ) as workspace:
        session = workspace.session()
        for path in (a, c):
            ok(await session.call("read", {"file_path": str(path)}))
        alone = await session.call("edit", one(c, "other", "\u4e00"))
        result = await edit_files(session, one(a, "alpha", "ALPHA"), one(c, "other", "\u4e00"))
        assert workspace.journal is not None
        entries = await workspace.journal.entries()
    message = f'cannot edit "{c}": cp1252 cannot encode "\u4e00" (U+4E00) in new_string'
    assert alone.code == result.code == "FS_NOT_ENCODABLE"
    assert alone.text == f"Error: {message}"
    assert result.text == f'Error: edit 2 of 2 ("{c}"): {message}'
    assert a.read_text(encoding="utf-8") == "alpha\n"
    assert c.read_bytes() == "caf\u00e9 other\n".encode("cp1252")
    assert entries == []


async def test_a_file_outside_the_fence_is_refused_before_any_file_is_published(
    tmp_path: Path,
) -> None:
    # Reads may leave the fence (`confine_reads=False`), changes may not: the set's second
    # file is refused at staging, as `edit` refuses it, and the first is never written.
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    a, o = root / "a.txt", outside / "o.txt"
    a.write_text("alpha\n", encoding="utf-8")
    o.write_text("other\n", encoding="utf-8")
    async with Workspace.sandbox(
        root, confine_reads=False, journal=tmp_path / "journal"
    ) as workspace:
        session = workspace.session()
        for path in (a, o):
            ok(await session.call("read", {"file_path": str(path)}))
        alone = await session.call("edit", one(o, "other", "O"))
        result = await edit_files(session, one(a, "alpha", "ALPHA"), one(o, "other", "O"))
        assert workspace.journal is not None
        entries = await workspace.journal.entries()
    message = (
        f'cannot edit "{o}": outside the sandbox [sandbox: file access denied under '
        "workspace-write mode]"
    )
    assert alone.code == result.code == "FS_SANDBOX_DENIED"
    assert alone.text.startswith(f"Error: {message}")
    assert result.text.startswith(f'Error: edit 2 of 2 ("{o}"): {message}')
    assert a.read_text(encoding="utf-8") == "alpha\n"
    assert o.read_text(encoding="utf-8") == "other\n"
    assert entries == []


async def test_a_read_only_sandbox_refuses_the_set_as_edit_does(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("alpha\n", encoding="utf-8")
    async with Workspace.sandbox(tmp_path, mode="read-only") as workspace:
        session = workspace.session()
        ok(await session.call("read", {"file_path": str(a)}))
        alone = await session.call("edit", one(a, "alpha", "A"))
        result = await edit_files(session, one(a, "alpha", "A"))
    assert alone.code == result.code == "FS_SANDBOX_DENIED"
    message = alone.text.removeprefix("Error: ")
    assert message.startswith(f'cannot edit "{a}": the sandbox is read-only')
    assert result.text == f'Error: edit 1 of 1 ("{a}"): {message}'
    assert a.read_text(encoding="utf-8") == "alpha\n"


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"alpha\x00beta\n", "binary file"), (b"alpha\xffbeta\n", "invalid UTF-8 text")],
    ids=["binary", "invalid-utf8"],
)
async def test_a_file_that_is_not_text_is_refused_in_edit_s_words(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    async with Workspace.sandbox(tmp_path, policy=False) as workspace:
        session = workspace.session()
        alone = await session.call("edit", one(path, "alpha", "A"))
        result = await edit_files(session, one(path, "alpha", "A"))
    assert alone.code == result.code == "FS_NOT_TEXT"
    assert alone.text == f'Error: cannot edit "{path}": {reason}'
    assert result.text == f'Error: edit 1 of 1 ("{path}"): cannot edit "{path}": {reason}'
    assert path.read_bytes() == data
