"""Line indexes alone: a window resumed from any indexed chunk equals the full scan's, and
the per-workspace store keeps one version per file, within its bounds."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_fs.fs import FsTargetKey, FsVersion
from dsh_fs.tools.paging._line_index import IndexBuilder, LineIndex, LineIndexes
from dsh_fs.tools.paging._window import LineWindow, Window

from .test_window import chunked, reference_window

V1, V2 = FsVersion("v1"), FsVersion("v2")
KEY = FsTargetKey("/a.txt")


def scan(
    chunks: list[str], offset: int, limit: int, max_line_chars: int, max_bytes: int
) -> tuple[Window, LineIndex]:
    """A full scan that builds the index as the read tool does (offsets in characters
    here: only their order matters to the index)."""
    window = LineWindow(offset, limit, max_line_chars=max_line_chars, max_bytes=max_bytes)
    builder = IndexBuilder()
    position = 0
    for chunk in chunks:
        builder.add(position, window.line, window.at_line_start)
        window.feed(chunk)
        position += len(chunk)
    result = window.finish()
    return result, builder.build(V1, result.total_lines)


def resume(
    chunks: list[str],
    index: LineIndex,
    offset: int,
    limit: int,
    max_line_chars: int,
    max_bytes: int,
) -> Window:
    """What the read tool does with an index: from the checkpoint's chunk on, until done."""
    total = index.total_lines
    if offset > total and not (offset == 1 and total == 0):
        return Window(offset=offset, lines=(), total_lines=total, output_capped=False)
    checkpoint = index.checkpoint(offset)
    caps = {"max_line_chars": max_line_chars, "max_bytes": max_bytes}
    if checkpoint.offset == 0:
        window = LineWindow(offset, limit, **caps)
    else:
        window = LineWindow.resumed(offset, limit, checkpoint.line, **caps)
    position = 0
    for chunk in chunks:
        if position >= checkpoint.offset:
            window.feed(chunk)
            if window.done:
                return window.finish(total)
        position += len(chunk)
    return window.finish()


@given(
    text=st.text(alphabet="ab\n\r\ufeffé€😀", max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=12),
    first=st.integers(min_value=1, max_value=14),
    offset=st.integers(min_value=1, max_value=14),
    limit=st.integers(min_value=1, max_value=12),
    max_line_chars=st.integers(min_value=1, max_value=6),
    max_bytes=st.integers(min_value=1, max_value=120),
)
@example(text="ab\ncd\nef", cuts=[4], first=1, offset=2, limit=1, max_line_chars=5, max_bytes=50)
@example(text="\ufeffa\nb", cuts=[1], first=1, offset=1, limit=2, max_line_chars=5, max_bytes=50)
@example(text="a\r\nb\n", cuts=[2], first=3, offset=2, limit=1, max_line_chars=5, max_bytes=50)
def test_a_window_resumed_from_the_index_equals_the_full_scan(
    text: str,
    cuts: list[int],
    first: int,
    offset: int,
    limit: int,
    max_line_chars: int,
    max_bytes: int,
) -> None:
    chunks = chunked(text, cuts)
    _, index = scan(chunks, first, 3, max_line_chars, max_bytes)
    expected = reference_window(
        text, offset, limit, max_line_chars=max_line_chars, max_bytes=max_bytes
    )
    assert index.total_lines == expected.total_lines
    got = resume(chunks, index, offset, limit, max_line_chars, max_bytes)
    assert got == expected


def test_the_checkpoint_is_the_last_chunk_the_line_can_be_read_from() -> None:
    builder = IndexBuilder()
    builder.add(0, 1, True)  # "a\nb"
    builder.add(3, 2, False)  # "b\nc\n"  (line 2 continues)
    builder.add(7, 4, True)  # "d\n"
    index = builder.build(V1, 4)
    assert (index.checkpoint(1).offset, index.checkpoint(2).offset) == (0, 0)
    assert (index.checkpoint(3).offset, index.checkpoint(3).line) == (3, 2)
    assert (index.checkpoint(4).offset, index.checkpoint(4).line) == (7, 4)
    assert index.checkpoint(99).offset == 7


def test_a_resumed_window_must_start_at_or_before_its_first_line() -> None:
    with pytest.raises(ValueError, match="at or before"):
        LineWindow.resumed(3, 10, 4)
    with pytest.raises(ValueError, match="done"):
        LineWindow(1, 10).finish(5)


def index_of(chunks: int, version: FsVersion = V1) -> LineIndex:
    return LineIndex(version, chunks, array("q", range(chunks)), array("q", [2] * chunks))


def test_an_index_of_another_version_is_dropped() -> None:
    indexes = LineIndexes()
    indexes.put(KEY, index_of(3))
    assert indexes.get(KEY, V1) is not None
    assert indexes.get(KEY, V2) is None
    assert indexes.get(KEY, V1) is None, "a version change drops the entry"


def test_the_store_keeps_one_version_per_file() -> None:
    indexes = LineIndexes()
    indexes.put(KEY, index_of(3, V1))
    indexes.put(KEY, index_of(4, V2))
    assert len(indexes) == 1
    assert indexes.get(KEY, V2) is not None


def test_the_least_recently_used_files_go_first_when_over_budget() -> None:
    indexes = LineIndexes(max_chunks=10, max_files=3)
    keys = [FsTargetKey(f"/{n}") for n in range(4)]
    for key in keys[:3]:
        indexes.put(key, index_of(3))
    assert indexes.get(keys[0], V1) is not None  # now the most recent
    indexes.put(keys[3], index_of(3))  # 12 chunks > 10: the oldest (keys[1]) goes
    assert [indexes.get(k, V1) is not None for k in keys] == [True, False, True, True]
    indexes.put(FsTargetKey("/big"), index_of(11))  # larger than the whole budget
    assert indexes.get(FsTargetKey("/big"), V1) is None
    many = LineIndexes(max_chunks=100, max_files=2)
    for key in keys:
        many.put(key, index_of(1))
    assert len(many) == 2


@given(
    text=st.text(alphabet="ab\n\r\ufeffé€😀", max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=20),
    kept=st.integers(min_value=2, max_value=5),
    offset=st.integers(min_value=1, max_value=14),
    limit=st.integers(min_value=1, max_value=12),
)
def test_a_bounded_index_keeps_few_chunk_starts_and_still_resumes_exactly(
    text: str, cuts: list[int], kept: int, offset: int, limit: int
) -> None:
    chunks = chunked(text, cuts)
    window = LineWindow(1, 3)
    builder = IndexBuilder(max_checkpoints=kept)
    position = 0
    for chunk in chunks:
        builder.add(position, window.line, window.at_line_start)
        window.feed(chunk)
        position += len(chunk)
    index = builder.build(V1, window.finish().total_lines)
    assert index.chunks <= kept
    assert index.chunks == min(len(chunks), kept) or index.chunks >= kept // 2
    expected = reference_window(text, offset, limit, max_line_chars=2000, max_bytes=50 * 1024)
    assert resume(chunks, index, offset, limit, 2000, 50 * 1024) == expected


def test_a_full_index_keeps_every_second_chunk_start_from_then_on() -> None:
    builder = IndexBuilder(max_checkpoints=4)
    for number in range(9):
        builder.add(10 * number, number + 1, True)
    index = builder.build(V1, 9)
    # 0-3 kept; at 4 the starts halve to 0, 2 and every second follows: 0, 2, 4, 6; at 8
    # they halve again to 0, 4, then 8.
    assert [index.checkpoint(line).offset for line in (1, 4, 5, 8, 9)] == [0, 0, 40, 40, 80]
    assert index.chunks == 3
    with pytest.raises(ValueError, match="at least 2"):
        IndexBuilder(max_checkpoints=1)
