"""Read windowing alone: SPEC §6 line semantics and caps, against a naive reference model."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_fs.tools.paging._window import (
    MAX_BYTES,
    MAX_LINE_CHARS,
    MAX_LINES,
    TRUNCATION_SUFFIX,
    LineWindow,
    Window,
    window_text,
    window_whole,
)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def reference_window(
    text: str,
    offset: int,
    limit: int,
    *,
    max_line_chars: int = MAX_LINE_CHARS,
    max_bytes: int = MAX_BYTES,
) -> Window:
    """SPEC §6 spelled out slowly over the whole text (line length in UTF-16 code units, as
    upstream's JavaScript counts it)."""
    text = text.removeprefix("\ufeff")
    raw = text.split("\n")
    if raw[-1] == "":
        raw.pop()  # a final newline ends the last line; it does not start another
    kept: list[str] = []
    used = 0
    capped = False
    for line in raw[offset - 1 : offset - 1 + limit]:
        line = line.removesuffix("\r")
        units = line.encode("utf-16-le")
        if len(units) > 2 * max_line_chars:
            head = units[: 2 * max_line_chars]
            if 0xD800 <= int.from_bytes(head[-2:], "little") <= 0xDBFF:
                head = head[:-2]  # never half a surrogate pair: cut before it
            line = head.decode("utf-16-le") + f"... (line truncated to {max_line_chars} chars)"
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > max_bytes:
            capped = True
            break
        kept.append(line)
        used += size
    return Window(offset=offset, lines=tuple(kept), total_lines=len(raw), output_capped=capped)


def chunked(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(
    text=st.text(alphabet="ab\n\r\ufeffé€😀", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
    offset=st.integers(min_value=1, max_value=12),
    limit=st.integers(min_value=1, max_value=12),
    max_line_chars=st.integers(min_value=1, max_value=6),
    max_bytes=st.integers(min_value=1, max_value=120),
)
@example(text="\ufeff", cuts=[], offset=1, limit=1, max_line_chars=3, max_bytes=50)
@example(text="ab\r", cuts=[2], offset=1, limit=1, max_line_chars=2, max_bytes=50)
@example(text="abc\r\n", cuts=[3], offset=1, limit=1, max_line_chars=3, max_bytes=50)
def test_windowing_any_chunking_matches_the_reference_model(
    text: str, cuts: list[int], offset: int, limit: int, max_line_chars: int, max_bytes: int
) -> None:
    window = LineWindow(offset, limit, max_line_chars=max_line_chars, max_bytes=max_bytes)
    for chunk in chunked(text, cuts):
        window.feed(chunk)
    expected = reference_window(
        text, offset, limit, max_line_chars=max_line_chars, max_bytes=max_bytes
    )
    assert window.finish() == expected


@given(
    lines=st.lists(st.text(alphabet="xy€\r", max_size=2100), min_size=0, max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=70000), max_size=6),
    offset=st.integers(min_value=1, max_value=31),
    limit=st.integers(min_value=1, max_value=MAX_LINES),
)
def test_windowing_with_the_spec_caps_matches_the_reference_model(
    lines: list[str], cuts: list[int], offset: int, limit: int
) -> None:
    text = "\n".join(lines)
    assert window_text(chunked(text, cuts), offset, limit) == reference_window(text, offset, limit)


@given(
    lines=st.lists(
        st.one_of(
            st.text(alphabet="xy \t", max_size=40),
            st.sampled_from(["x" * 1999, "y" * 2000, "z" * 2001, "é", "a\r", "\ufeffb"]),
        ),
        min_size=0,
        max_size=40,
    ),
    newline_at_end=st.booleans(),
    repeat=st.sampled_from([1, 2, 30]),
    offset=st.integers(min_value=1, max_value=45),
    limit=st.integers(min_value=1, max_value=MAX_LINES),
)
@example(lines=[], newline_at_end=False, repeat=1, offset=1, limit=1)
@example(lines=[""], newline_at_end=True, repeat=1, offset=1, limit=1)
@example(lines=["x" * 1000], newline_at_end=True, repeat=52, offset=1, limit=MAX_LINES)
def test_a_whole_text_windows_as_the_reference_model_says_plain_or_not(
    lines: list[str], newline_at_end: bool, repeat: int, offset: int, limit: int
) -> None:
    # Plain short texts take the split at once; BOMs, CRs, long lines and texts past the
    # byte cap the general path: both must answer as the model does.
    text = "\n".join(lines * repeat) + ("\n" if newline_at_end else "")
    assert window_whole(text, offset, limit) == reference_window(text, offset, limit)


def test_lines_split_on_newline_and_a_final_line_without_newline_counts() -> None:
    window = window_text(["one\ntwo\nthree"])
    assert window.lines == ("one", "two", "three")
    assert window.total_lines == 3
    assert not window.output_capped


def test_a_final_newline_does_not_add_a_line() -> None:
    assert window_text(["one\ntwo\n"]).total_lines == 2


def test_an_empty_text_has_no_lines_and_offset_one_is_in_range() -> None:
    window = window_text([])
    assert window == Window(offset=1, lines=(), total_lines=0, output_capped=False)
    assert not window.out_of_range


def test_a_lone_newline_is_one_empty_line() -> None:
    assert window_text(["\n"]).lines == ("",)


def test_crlf_line_endings_are_not_shown() -> None:
    assert window_text(["a\r\nb\r\n"]).lines == ("a", "b")


def test_only_one_trailing_carriage_return_is_stripped() -> None:
    assert window_text(["a\r\r\nb\rc\n"]).lines == ("a\r", "b\rc")


def test_a_crlf_split_across_chunks_is_still_stripped() -> None:
    assert window_text(["a\r", "\nb"]).lines == ("a", "b")


def test_a_leading_byte_order_mark_is_hidden_from_line_one_only() -> None:
    assert window_text(["\ufeffa\n\ufeffb"]).lines == ("a", "\ufeffb")


def test_offset_and_limit_select_the_window_and_the_total_stays_exact() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 101))
    window = window_text([text[:333], text[333:]], offset=40, limit=3)
    assert window.lines == ("line 40", "line 41", "line 42")
    assert window.total_lines == 100


def test_offset_past_the_end_is_out_of_range() -> None:
    assert window_text(["a\nb\n"], offset=3).out_of_range
    assert not window_text(["a\nb\n"], offset=2).out_of_range
    assert window_text([], offset=2).out_of_range


def test_a_line_longer_than_the_cap_is_truncated_with_the_notice() -> None:
    long = "x" * (MAX_LINE_CHARS + 1)
    window = window_text([long + "\n" + "y" * MAX_LINE_CHARS + "\r\n"])
    assert window.lines == ("x" * MAX_LINE_CHARS + TRUNCATION_SUFFIX, "y" * MAX_LINE_CHARS)
    assert TRUNCATION_SUFFIX == "... (line truncated to 2000 chars)"


def test_the_line_cap_is_measured_in_utf16_units_not_bytes() -> None:
    line = "€" * MAX_LINE_CHARS  # 3 UTF-8 bytes each, but one UTF-16 unit: not truncated
    assert window_text([line]).lines == (line,)


def test_a_character_outside_the_bmp_counts_two_as_upstream_counts_it() -> None:
    # 7 lines of 2000 emoji: each is 4000 UTF-16 units, cut to 1000 emoji, so all 7 fit
    # under the 50 KiB cap (upstream shows all 7 too).
    text = ("😀" * 2000 + "\n") * 7
    window = window_text([text])
    assert window.lines == ("😀" * 1000 + TRUNCATION_SUFFIX,) * 7
    assert not window.output_capped


def test_a_cut_that_would_split_a_surrogate_pair_is_made_before_the_pair() -> None:
    line = "a" + "😀" * 1000  # the 2000th unit is the first half of the last emoji
    (shown,) = window_text([line]).lines
    assert shown == "a" + "😀" * 999 + TRUNCATION_SUFFIX
    assert all(not "\ud800" <= char <= "\udfff" for char in shown)


def test_the_byte_cap_stops_before_the_line_that_would_exceed_it() -> None:
    # Each line is 99 bytes of text plus 1 separator: 512 lines fill 51200 - 1 bytes.
    line = "z" * 99
    window = window_text([(line + "\n") * 600])
    assert len(window.lines) == 512
    assert window.output_capped
    assert window.total_lines == 600


def test_a_line_that_fills_the_byte_cap_exactly_is_kept() -> None:
    window = LineWindow(1, 10, max_bytes=7)
    window.feed("abc\nabc\nabc\n")
    assert window.finish() == Window(
        offset=1, lines=("abc", "abc"), total_lines=3, output_capped=True
    )


def test_the_byte_cap_counts_utf8_bytes() -> None:
    line = "€" * 1000  # 3000 bytes
    window = window_text([(line + "\n") * 20])
    assert len(window.lines) == 17  # 17 * 3000 + 16 = 51016; one more is 54017
    assert window.output_capped


def test_reaching_the_limit_is_not_capping() -> None:
    window = window_text(["a\n" * 5000])
    assert len(window.lines) == MAX_LINES
    assert not window.output_capped
    assert window.total_lines == 5000


def test_a_huge_single_line_is_kept_in_bounded_memory() -> None:
    window = LineWindow()
    block = "q" * (1 << 20)
    for _ in range(64):
        window.feed(block)
        assert window._piece_len <= MAX_LINE_CHARS + 1
    result = window.finish()
    assert result.lines == ("q" * MAX_LINE_CHARS + TRUNCATION_SUFFIX,)
    assert result.total_lines == 1


def test_offset_and_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LineWindow(0)
    with pytest.raises(ValueError, match="at least 1"):
        LineWindow(1, 0)
