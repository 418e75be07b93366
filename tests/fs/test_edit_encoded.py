"""The literal edit on UTF-8 bytes: wherever it decides, it is the text edit byte for byte;
every case it leaves to the text path (errors, CRLF-spanning matches) is one the text path
must handle. `EncodedText` keeps text as bytes until it is asked for."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_fs.errors import FsError
from dsh_fs.fs import EncodedText, FsEditRequest, apply_edit
from dsh_fs.fs._edit_encoded import apply_edit_encoded

P = "/w/f.txt"

text = st.text(alphabet=st.sampled_from(list("ab\r\n\t é€😀\ufeff")), max_size=40)


@given(content=text, old=text, new=text, replace_all=st.booleans())
@example(content="\ufeffab", old="\ufeffa", new="x", replace_all=False)
@example(content="a\r\nb\r\nc\n", old="b", new="x\ny", replace_all=False)
@example(content="aaa", old="a", new="b", replace_all=True)
@example(content="a", old="", new="b", replace_all=True)
@example(content="é€", old="€", new="\ud800", replace_all=False)
def test_the_bytes_edit_is_the_text_edit_wherever_it_decides(
    content: str, old: str, new: str, replace_all: bool
) -> None:
    edit = FsEditRequest(old_string=old, new_string=new, replace_all=replace_all)
    decided = apply_edit_encoded(content.encode(), edit)
    try:
        expected = apply_edit(content, edit, P)
    except FsError:
        assert decided is None, "a failing edit is the text path's to report"
        return
    if decided is None:
        # Left to the text path: only a line break in a CRLF file, or what bytes can't hold.
        crlf = "\r\n" in content.removeprefix("\ufeff")
        assert (crlf and ("\n" in old or "\r" in old)) or not old or "\ud800" in new
        return
    after, count = decided
    assert (after.text, count) == expected
    assert after.to_bytes() == expected[0].encode()


def test_a_bytes_edit_is_views_of_the_original_plus_the_replacement() -> None:
    data = b"one\ntwo\nthree\n"
    decided = apply_edit_encoded(data, FsEditRequest(old_string="two", new_string="2"))
    assert decided is not None
    after, count = decided
    assert count == 1
    assert [bytes(p) for p in after.parts] == [b"one\n", b"2", b"\nthree\n"]
    assert after.size == len(data) - 2
    assert after.decoded is None, "nothing decoded until asked"
    assert after.text == "one\n2\nthree\n"
    assert after.decoded == after.text


def test_encoded_text_compares_and_joins_its_pieces() -> None:
    split = EncodedText([b"h\xc3", b"\xa9llo"])
    assert split.text == "héllo"
    assert split == EncodedText.of("héllo")
    assert split.to_bytes() == "héllo".encode()
    assert EncodedText([]).text == ""
    with pytest.raises(UnicodeEncodeError):
        EncodedText.of("\ud800")
