"""A large non-ASCII write is encoded and written in pieces (`encode_text_parts`, one
`writev`) and kept in those pieces by `RecentlyPublished` (issue 44: CPython encodes such a
text whole into a freshly mapped buffer sized for its widest character, a sixth of a 1 MB
write). The pieces must be the very bytes of the whole encoding; the proof that a file is
still what this provider published compares every piece; an edit, the journal's record, its
diff and its undo see the same content as after a write in one piece.

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import EncodedText, FsVersion, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem, _text
from dsh_fs.providers.local import _io
from dsh_fs.providers.local._versions import RecentlyPublished

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick
LINE = "caf\u00e9 \u2014 \U0001f600 line\n"  # 1-, 2-, 3- and 4-byte characters
LARGE = LINE * (3 * _text.ENCODE_PIECE_CHARS // len(LINE) + 7)  # several pieces


def test_a_large_non_ascii_text_is_encoded_in_pieces_of_the_same_bytes() -> None:
    encoded = _text.encode_text_parts(LARGE, "write", "a.txt")
    assert len(encoded.parts) >= 3
    assert all(type(part) is bytes for part in encoded.parts)
    assert b"".join(encoded.parts) == LARGE.encode("utf-8")
    assert encoded.decoded is LARGE


def test_ascii_and_small_text_is_encoded_whole() -> None:
    ascii_text = "plain line\n" * (_text.ENCODE_PIECE_CHARS // 2)
    assert len(_text.encode_text_parts(ascii_text, "write", "a.txt").parts) == 1
    assert len(_text.encode_text_parts(LINE * 10, "write", "a.txt").parts) == 1


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(st.characters(codec="utf-8"), min_size=1, max_size=40),
    copies=st.integers(min_value=1, max_value=30),
    piece=st.integers(min_value=1, max_value=9),
)
def test_any_text_in_any_piece_size_is_its_whole_encoding(
    text: str, copies: int, piece: int
) -> None:
    whole = text * copies
    original = _text.ENCODE_PIECE_CHARS
    _text.ENCODE_PIECE_CHARS = piece
    try:
        encoded = _text.encode_text_parts(whole, "write", "a.txt")
    finally:
        _text.ENCODE_PIECE_CHARS = original
    assert b"".join(encoded.parts) == whole.encode("utf-8")
    assert encoded.text == whole


def test_a_lone_surrogate_in_the_last_piece_is_refused_as_the_whole_encoding_is() -> None:
    with pytest.raises(FsError) as whole:
        _text.encode_text("x\ud800", "write", "a.txt")
    with pytest.raises(FsError) as pieces:
        _text.encode_text_parts(LARGE + "\ud800", "write", "a.txt")
    assert pieces.value.code is whole.value.code is FsErrorCode.NOT_TEXT
    assert str(pieces.value) == str(whole.value)


def test_a_kept_publication_in_pieces_matches_only_its_very_bytes() -> None:
    recent = RecentlyPublished()
    version = FsVersion("v")
    parts = (b"alpha ", b"beta ", b"gamma\n")
    assert recent.keep("a", version, EncodedText(parts)) is not None
    assert recent.match("a", version, lambda: b"alpha beta gamma\n") is not None
    assert recent.match("a", version, bytearray(b"alpha beta gamma\n").copy) is not None
    for other in (b"alpha beta gammA\n", b"Alpha beta gamma\n", b"alpha beta gamma\n\n", b""):
        assert recent.match("a", version, partial(bytes, other)) is None
    # Pieces across a boundary: the same bytes cut elsewhere still match.
    assert recent.match("a", version, lambda: b"alpha beta" + b" gamma\n") is not None


def test_views_are_kept_joined_and_bytes_pieces_as_they_are() -> None:
    recent = RecentlyPublished()
    published = recent.keep("a", FsVersion("v"), EncodedText((b"one ", b"two\n")))
    assert published is not None
    assert published.parts == (b"one ", b"two\n")
    backing = b"zero one two\n"
    viewed = EncodedText((memoryview(backing)[5:9], b"two\n"))
    published = recent.keep("b", FsVersion("w"), viewed)
    assert published is not None
    assert published.parts == (b"one two\n",)


def test_a_write_of_more_pieces_than_one_writev_takes_is_whole(tmp_path: Path) -> None:
    parts = [bytes([65 + n % 26]) * (n % 7 + 1) for n in range(3 * _io._IOV_MAX + 5)]
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        _io.write_all(fd, EncodedText(parts))
    finally:
        os.close(fd)
    assert path.read_bytes() == b"".join(parts)


def test_a_partial_writev_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel may write less than asked (a signal, a quota): simulated by a writev that
    # takes at most 5 bytes a call, which cuts pieces in the middle.
    real = os.writev
    calls = 0

    def stingy(fd: int, buffers: list[memoryview]) -> int:
        nonlocal calls
        calls += 1
        budget, taken = 5, []
        for buffer in buffers:
            taken.append(buffer[:budget])
            budget -= len(taken[-1])
            if not budget:
                break
        return real(fd, taken)

    monkeypatch.setattr(os, "writev", stingy)
    parts = [b"alpha ", b"be", b"ta gamma ", b"delta\n"]
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        _io.write_all(fd, EncodedText(parts))
    finally:
        os.close(fd)
    assert path.read_bytes() == b"alpha beta gamma delta\n"
    assert calls == 5


@pytest.mark.anyio
async def test_a_large_write_lands_whole_and_a_same_tick_rewrite_of_its_last_piece_is_stale(
    tmp_path: Path,
) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, LARGE)
    data = LARGE.encode("utf-8")
    assert (tmp_path / "a.txt").read_bytes() == data
    # Unchanged, the kept pieces prove it: a guarded write goes through.
    again = await fs.write_text(target, LARGE + "more\n", ReplaceIfVersion(written.version))
    assert again.before == LARGE
    # Another program changes one byte near the end, in place, in the same tick.
    changed = data + b"more\n"
    changed = changed[:-3] + b"RE\n"
    with (tmp_path / "a.txt").open("r+b") as f:
        f.write(changed)
    now = await fs.stat(target)
    assert now is not None
    assert now.version == again.version
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(again.version))
    assert info.value.code is FsErrorCode.STALE_VERSION
    assert (tmp_path / "a.txt").read_bytes() == changed


@pytest.mark.anyio
async def test_an_edit_after_a_large_write_edits_the_pieces_kept(tmp_path: Path) -> None:
    async with Workspace.local(tmp_path, policy=False) as ws:
        s = ws.session()
        path = str(tmp_path / "a.txt")
        content = LARGE + "the unique end\n"
        assert not (await s.call("write", {"file_path": path, "content": content})).is_error
        edit = {"file_path": path, "old_string": "unique end", "new_string": "last line"}
        assert not (await s.call("edit", edit)).is_error
        edit = {"file_path": path, "old_string": "caf\u00e9 \u2014 \U0001f600", "new_string": "x"}
        result = await s.call("edit", edit)
        assert result.code == "FS_AMBIGUOUS_EDIT"
    expected = LARGE + "the last line\n"
    assert (tmp_path / "a.txt").read_bytes() == expected.encode("utf-8")


@pytest.mark.anyio
async def test_a_journaled_large_write_is_counted_diffed_and_undone_to_the_exact_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    before = LARGE.encode("utf-8")
    (root / "a.txt").write_bytes(before)
    lines = LARGE.splitlines(keepends=True)
    lines[len(lines) // 2] = "the middle, rewritten\n"
    lines[-1] = "the end, rewritten\n"
    after = "".join(lines) + "one more line\n"
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "a.txt", "limit": 1})).is_error
        assert not (await s.call("write", {"file_path": "a.txt", "content": after})).is_error
        (entry,) = await ws.journal.entries()
        assert (entry.added, entry.removed) == (3, 2)
        diff = await ws.journal.diff(entry.id)
        assert "+the middle, rewritten\n" in diff
        assert "+one more line\n" in diff
        assert diff.count("\n@@ ") == 2  # the lines are all alike: not one hunk from middle to end
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "undone"
    assert (root / "a.txt").read_bytes() == before


@pytest.mark.parametrize("loaded", [False, True])
def test_a_file_holds_the_pieces_only_with_their_very_bytes_across_compare_chunks(
    tmp_path: Path, loaded: bool
) -> None:
    # The pieces cut the content elsewhere than the compare's chunks do; a file that
    # differs in one byte of a later chunk, or is one byte shorter or longer, is not ours.
    data = bytes(range(256)) * (5 * _io.COMPARE_CHUNK // 256 // 2 + 3)
    cuts = [0, 1, 1000, _io.COMPARE_CHUNK - 1, _io.COMPARE_CHUNK + 7, 2 * _io.COMPARE_CHUNK]
    parts = [data[a:b] for a, b in zip(cuts, [*cuts[1:], len(data)], strict=True)]
    path = tmp_path / "f"

    def holds(content: bytes) -> bool:
        path.write_bytes(content)
        fd = os.open(path, os.O_RDONLY)
        try:
            lazy = _io.LazyContent(fd, len(content))
            if loaded:
                lazy()
            return lazy.holds(parts)
        finally:
            os.close(fd)

    assert holds(data)
    at = 2 * _io.COMPARE_CHUNK + 5
    assert not holds(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    assert not holds(data[:-1])
    assert not holds(data + b"\n")
    assert not holds(b"")
