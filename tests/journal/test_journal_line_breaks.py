"""`diff`, the hunks `undo --hunk N` numbers and a revert's "line N changed since" count
lines as `read` does: cut after each ``\\n`` only. A form feed, U+2028, ``\\x1c``-``\\x1e``,
``\\x85`` or a lone ``\\r`` is a character inside a line, and a revert stays byte-exact."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.journal import Journal
from dsh_fs.journal._diff import lines

pytestmark = pytest.mark.anyio

_ODD = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r"]
"""What `str.splitlines` cuts at besides ``\\n``."""


def _journal(ws: Workspace) -> Journal:
    assert ws.journal is not None
    return ws.journal


async def _edited(ws: Workspace, old: str, new: str) -> str:
    """The agent reads f.c and replaces `old` with `new`; the entry's id."""
    s = ws.session(label="agent")
    await s.call("read", {"file_path": "f.c"})
    result = await s.call("edit", {"file_path": "f.c", "old_string": old, "new_string": new})
    assert not result.is_error, result.text
    return (await _journal(ws).entries())[0].id


async def _read_number(ws: Workspace, needle: str) -> int:
    """The number `read` shows for the line that holds `needle`."""
    text = (await ws.session(label="user").call("read", {"file_path": "f.c"})).text
    (number,) = [int(n) for n, line in re.findall(r"^(\d+): (.*)$", text, re.M) if needle in line]
    return number


def _paged(count: int) -> str:
    """`count` lines; every fifth a page break (a form feed alone, as GNU sources have)."""
    return "".join(f"line {n}\n" if n % 5 else "\x0c\n" for n in range(1, count + 1))


async def test_diff_numbers_the_lines_of_a_file_with_page_breaks_as_read_does(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.c").write_text(_paged(20))
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _edited(ws, "line 17\n", "LINE 17\n")
        diff = await _journal(ws).diff(entry_id)
        assert diff == (
            "--- a/f.c\n+++ b/f.c\n@@ -14,7 +14,7 @@\n line 14\n \x0c\n line 16\n"
            "-line 17\n+LINE 17\n line 18\n line 19\n \x0c\n"
        )
        assert await _read_number(ws, "LINE 17") == 17


async def test_a_revert_refused_names_the_line_read_shows(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.c").write_text(_paged(20))
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _edited(ws, "line 17\n", "LINE 17\n")
        now = (root / "f.c").read_text()
        (root / "f.c").write_text(now.replace("line 16\n", "line sixteen\n"))
        (result,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert result.hunks is not None
        (hunk,) = result.hunks
        number = await _read_number(ws, "sixteen")
        assert hunk.reason == f"line {number} changed since; this hunk was kept"
        assert number == 16


@pytest.mark.parametrize("odd", _ODD, ids=[f"U+{ord(c):04X}" for c in _ODD])
async def test_a_break_inside_a_line_is_no_line_end_in_diff_or_hunks(
    tmp_path: Path, odd: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    before = f"head\nx = 'a{odd}b'\none\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    (root / "f.c").write_bytes(before.encode())
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _edited(ws, "six\n", "SIX\n")
        diff = await _journal(ws).diff(entry_id)
        assert "No newline" not in diff
        assert diff.splitlines(keepends=True)[2] == "@@ -5,5 +5,5 @@\n"
        assert await _read_number(ws, "SIX") == 8
        # The hunk reverted alone, in a file changed above it: byte-exact, break kept.
        after = (root / "f.c").read_bytes()
        (root / "f.c").write_bytes(after.replace(b"head\n", b"HEAD\n"))
        (result,) = await _journal(ws).undo(ids=[entry_id], hunks=[1])
        assert result.result == "undone", result
        assert (root / "f.c").read_bytes() == before.replace("head\n", "HEAD\n").encode()


@pytest.mark.parametrize("odd", _ODD, ids=[f"U+{ord(c):04X}" for c in _ODD])
async def test_merge_puts_back_a_file_full_of_odd_breaks_byte_for_byte(
    tmp_path: Path, odd: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    before = "".join(f"l{n}{odd}m{n}\n" if n % 3 else f"{odd}\n" for n in range(1, 30))
    (root / "f.c").write_bytes(before.encode())
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        entry_id = await _edited(ws, f"l4{odd}m4\n", "four\n")
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.c"})
        result = await s.call("edit", {"file_path": "f.c", "old_string": "l25", "new_string": "L"})
        assert not result.is_error, result.text
        (undone,) = await _journal(ws).undo(ids=[entry_id], merge=True)
        assert undone.result == "undone", undone
        assert (root / "f.c").read_bytes() == before.replace("l25", "L").encode()


@given(st.lists(st.sampled_from(["a", "\n", "\r\n", *_ODD]), max_size=40).map("".join))
def test_lines_cuts_after_each_newline_only_and_keeps_every_character(text: str) -> None:
    assert lines(text) == re.findall(r"[^\n]*\n|[^\n]+\Z", text)
