"""`text_change`: the line counts and forward delta a commit keeps, made with one trim and one
text check, from bytes or from an edit's pieces, say exactly what `line_counts` and
`forward_delta` say."""

from __future__ import annotations

import random

from dsh_fs.fs import EncodedText, forward_delta, line_counts, text_change
from dsh_fs.providers._journal_records import content_fields

_LINES = (
    b"a\n",
    b"b\n",
    b"cc\n",
    b"\n",
    b"x",
    b"\xc3\xa9\n",
    b"\0\n",
    b"\xff\n",
    b"MARKER 0\n",
    b"MARKER 1\n",
    b"\r\n",
)


def _valid(data: bytes | None) -> bool:
    try:
        (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_text_change_says_what_line_counts_and_forward_delta_say() -> None:
    rng = random.Random(36)

    def text(lines: int) -> bytes:
        return b"".join(rng.choice(_LINES) for _ in range(lines))

    for _ in range(5000):
        before = text(rng.randrange(12)) if rng.random() > 0.1 else None
        base = before or b""
        if base and rng.random() < 0.5:
            # An edit: views of the replaced bytes around a new string (an empty end too).
            start = rng.randrange(len(base) + 1)
            stop = rng.randrange(start, len(base) + 1)
            view = memoryview(base)
            parts: list[bytes | memoryview] = [view[:start], text(rng.randrange(3)), view[stop:]]
        else:
            whole = text(rng.randrange(12))
            one, two = sorted(rng.randrange(len(whole) + 1) for _ in range(2))
            parts = [whole[:one], whole[one:two], whole[two:]]
        after = b"".join(bytes(part) for part in parts)
        expected = (*line_counts(before, after), forward_delta(before, after))
        assert text_change(before, after) == expected, (before, after)
        assert text_change(before, EncodedText(parts)) == expected, (before, parts)
        if _valid(before) and _valid(after):
            known = text_change(before, EncodedText(parts), before_utf8=True)
            assert known == expected, (before, parts)


def test_a_one_line_edit_of_a_megabyte_in_pieces_is_counted_as_its_bytes() -> None:
    before = b"".join(b"    value_%d = compute(%d)\n" % (n, n) for n in range(40_000))
    at = before.index(b"value_20000 ")
    view = memoryview(before)
    edited = EncodedText((view[:at], b"renamed_20000 ", view[at + len(b"value_20000 ") :]))
    joined = edited.to_bytes()
    expected = (*line_counts(before, joined), forward_delta(before, joined))
    assert expected[:2] == (1, 1)
    assert text_change(before, edited, before_utf8=True) == expected
    # A rewrite of most of it: the pieces are joined and counted as bytes.
    rewritten = EncodedText((view[:10], joined[10:].replace(b"compute", b"recompute")))
    again = rewritten.to_bytes()
    assert text_change(before, rewritten) == (
        *line_counts(before, again),
        forward_delta(before, again),
    )


def test_a_nul_byte_is_not_text_even_in_a_pre_image_known_to_be_utf8() -> None:
    assert text_change(b"a\0\n", b"b\n", before_utf8=True) == (None, None, None)
    assert text_change(b"a\n", EncodedText((b"a\n", b"\0"))) == (None, None, None)


def test_a_records_fields_are_the_same_from_pieces_and_from_bytes() -> None:
    rng = random.Random(9)
    lines = (*_LINES, "ü\n".encode("utf-16-le"), b"\xff\xfe", b"\xef\xbb\xbf")
    for _ in range(3000):
        before = b"".join(rng.choice(lines) for _ in range(rng.randrange(8)))
        if rng.random() < 0.1:
            before = "\ufeffhé\nllo\n".encode("utf-16")
        after = b"".join(rng.choice(lines) for _ in range(rng.randrange(8)))
        one, two = sorted(rng.randrange(len(after) + 1) for _ in range(2))
        codec = rng.choice((None, None, "iso8859-1"))
        expected = content_fields(
            created=False, removed=False, before=before, content=after, codec=codec
        )
        if _valid(after):  # an `EncodedText` is valid UTF-8
            pieces = EncodedText((after[:one], after[one:two], after[two:]))
            got = content_fields(
                created=False, removed=False, before=before, content=pieces, codec=codec
            )
            assert got == expected, (before, after, codec)
        if _valid(before):
            known = content_fields(
                created=False,
                removed=False,
                before=before,
                content=after,
                codec=codec,
                before_utf8=True,
            )
            assert known == expected, (before, after, codec)
