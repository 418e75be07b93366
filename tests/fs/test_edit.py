"""The literal edit: LF-normalized matching, dominant line ending, every other byte kept."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest, apply_edit
from dsh_fs.fs._edit import dominant_line_ending

P = "/w/f.txt"


def reference_edit(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int] | str:
    """The SPEC definition, spelled out slowly: match on the normalized text, map back."""
    norm_chars: list[str] = []
    starts: list[int] = []  # original offset where each normalized char begins
    i = 0
    while i < len(text):
        starts.append(i)
        if text.startswith("\r\n", i):
            norm_chars.append("\n")
            i += 2
        else:
            norm_chars.append(text[i])
            i += 1
    starts.append(len(text))
    norm = "".join(norm_chars)
    if norm.startswith("\ufeff"):  # the BOM is not text: it can't be matched, only kept
        norm = "\x00" + norm[1:]
    old_n = old.replace("\r\n", "\n")
    spans: list[tuple[int, int]] = []
    pos = norm.find(old_n)
    while pos != -1:
        spans.append((pos, pos + len(old_n)))
        pos = norm.find(old_n, pos + len(old_n))
    if not spans:
        return "not-found"
    if len(spans) > 1 and not replace_all:
        return f"ambiguous:{len(spans)}"
    eol = dominant_line_ending(text)
    replacement = new.replace("\r\n", "\n").replace("\n", eol)
    out: list[str] = []
    cursor = 0
    for s, e in spans if replace_all else spans[:1]:
        out.append(text[cursor : starts[s]])
        out.append(replacement)
        cursor = starts[e]
    out.append(text[cursor:])
    return "".join(out), len(spans)


def run(text: str, old: str, new: str, replace_all: bool = False) -> tuple[str, int] | str:
    try:
        return apply_edit(
            text, FsEditRequest(old_string=old, new_string=new, replace_all=replace_all), P
        )
    except FsError as error:
        if error.code is FsErrorCode.EDIT_NOT_FOUND:
            return "not-found"
        if error.code is not FsErrorCode.AMBIGUOUS_EDIT:
            return f"unexpected:{error.code}"
        count = int(error.message.split(" matched ")[1].split(" ")[0])
        return f"ambiguous:{count}"


line_text = st.text(alphabet=st.sampled_from(list("ab\r\n\t é\ufeff")), max_size=40)


@given(text=line_text, old=line_text.filter(bool), new=line_text, replace_all=st.booleans())
@example(text="a\r\r\nb", old="\nb", new="X", replace_all=False)
@example(text="a\r\nb", old="a\r", new="X", replace_all=False)
@example(text="a\r\rb\r\n", old="a\r", new="X\n", replace_all=True)
@example(text="\r\n", old="\r\r\n", new="", replace_all=False)
def test_edit_matches_the_normalized_reference_model(
    text: str, old: str, new: str, replace_all: bool
) -> None:
    assert run(text, old, new, replace_all) == reference_edit(text, old, new, replace_all)


def test_a_cr_before_a_line_break_in_old_string_is_never_the_cr_of_a_crlf() -> None:
    # Normalized, "x\r\r\ny" is "x", CR, LF, "y": a file of "x\r\ny" ("x", LF, "y") does not
    # hold it, and "x\r\r\ny" does.
    edit = FsEditRequest(old_string="x\r\r\ny", new_string="Z")
    assert run("x\r\ny\r\n", "x\r\r\ny", "Z") == "not-found"
    assert run("x\r\ny\r\n", "x\r\ny", "Z") == ("Z\r\n", 1)
    assert apply_edit("x\r\r\ny\r\n", edit, P) == ("Z\r\n", 1)
    assert run("\r\n\r\n", "\r\r\n", "", True) == "not-found"


def test_crlf_file_gets_crlf_replacement_and_keeps_other_bytes() -> None:
    text = "\ufeffone\r\ntwo\r\nthree"
    out, n = apply_edit(text, FsEditRequest(old_string="two\nthree", new_string="2\n3\n"), P)
    assert (out, n) == ("\ufeffone\r\n2\r\n3\r\n", 1)


def test_the_bom_is_not_text_it_cannot_be_matched_and_stays() -> None:
    with pytest.raises(FsError) as missing:
        apply_edit("\ufeffhello\n", FsEditRequest(old_string="\ufeffhello", new_string="x"), P)
    assert missing.value.code is FsErrorCode.EDIT_NOT_FOUND
    out, _ = apply_edit("\ufeffhello\n", FsEditRequest(old_string="hello", new_string="x"), P)
    assert out == "\ufeffx\n"
    # Only the first character is a BOM; a second U+FEFF is text like any other.
    out, _ = apply_edit("\ufeff\ufeffa", FsEditRequest(old_string="\ufeffa", new_string="b"), P)
    assert out == "\ufeffb"


def test_lf_file_with_a_stray_crlf_keeps_it_and_writes_lf() -> None:
    text = "a\r\nb\nc\nd"
    out, _ = apply_edit(text, FsEditRequest(old_string="c", new_string="x\ny"), P)
    assert out == "a\r\nb\nx\ny\nd"


def test_exact_messages_for_not_found_and_ambiguous_then_the_diagnosis() -> None:
    with pytest.raises(FsError) as missing:
        apply_edit("abc", FsEditRequest(old_string="z", new_string="y"), P)
    first, diagnosis = missing.value.message.split("\n", 1)
    assert first == 'old_string was not found in "/w/f.txt"'
    assert diagnosis.startswith("Nothing in the file is close to old_string")
    with pytest.raises(FsError) as twice:
        apply_edit("a a a", FsEditRequest(old_string="a", new_string="b"), P)
    assert twice.value.code is FsErrorCode.AMBIGUOUS_EDIT
    assert twice.value.message == (
        'old_string matched 3 times in "/w/f.txt"; '
        "provide a more specific old_string or set replace_all to true\n"
        "The matches start at line 1 (3 matches)."
    )
    assert dict(twice.value.details) == {"lines": [1, 1, 1], "count": 3}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "\n"),
        ("a\nb", "\n"),
        ("a\r\nb", "\r\n"),
        ("a\r\nb\nc", "\n"),
        ("a\r\nb\r\nc\n", "\r\n"),
    ],
)
def test_dominant_line_ending(text: str, expected: str) -> None:
    assert dominant_line_ending(text) == expected
