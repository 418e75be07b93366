"""`apply_change`: inserts and patches by line, byte-faithful outside the lines they touch."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FsEditRequest,
    FsInsertRequest,
    FsPatchHunk,
    FsPatchRequest,
    PatchOp,
    apply_change,
)

P = "/w/a.py"


def insert(text: str, line: int, new: str) -> str:
    return apply_change(text, FsInsertRequest(line=line, text=new), P)[0]


def hunk(*lines: str, anchors: tuple[str, ...] = (), at_end: bool = False) -> FsPatchHunk:
    ops: list[tuple[PatchOp, str]] = []
    for line in lines:
        op = line[0]
        assert op in (" ", "-", "+")
        ops.append((op, line[1:]))  # type: ignore[arg-type]
    return FsPatchHunk(anchors=anchors, lines=tuple(ops), at_end=at_end)


def patch(text: str, *hunks: FsPatchHunk) -> str:
    return apply_change(text, FsPatchRequest(hunks=hunks), P)[0]


def test_a_literal_edit_request_is_the_literal_edit() -> None:
    assert apply_change("a b a", FsEditRequest(old_string="b", new_string="c"), P) == ("a c a", 1)


@pytest.mark.parametrize(
    ("text", "line", "new", "expected"),
    [
        ("a\nb\n", 0, "x", "x\na\nb\n"),
        ("a\nb\n", 1, "x", "a\nx\nb\n"),
        ("a\nb\n", 2, "x", "a\nb\nx\n"),
        ("a\nb", 2, "x", "a\nb\nx"),
        ("a\nb\n", 2, "x\n", "a\nb\nx\n\n"),
        ("a\nb\n", 1, "x\ny", "a\nx\ny\nb\n"),
        ("", 0, "x", "x\n"),
        ("a\r\nb\r\n", 1, "x\ny", "a\r\nx\r\ny\r\nb\r\n"),
        ("a\r\nb\r\n", 1, "x\r\ny", "a\r\nx\r\ny\r\nb\r\n"),
        ("\ufeffa\n", 0, "x", "\ufeffx\na\n"),
        ("a\r\nb\nc\n", 3, "x", "a\r\nb\nc\nx\n"),
    ],
)
def test_insert_adds_whole_lines_after_the_line(
    text: str, line: int, new: str, expected: str
) -> None:
    assert insert(text, line, new) == expected


@pytest.mark.parametrize(
    ("text", "line", "total"), [("a\nb\n", 3, 2), ("a\nb\n", -1, 2), ("", 1, 0)]
)
def test_insert_after_a_line_the_file_lacks_is_out_of_range(
    text: str, line: int, total: int
) -> None:
    with pytest.raises(FsError) as info:
        insert(text, line, "x")
    assert info.value.code is FsErrorCode.NOT_FOUND
    assert info.value.message == (
        f'insert line {line} is out of range for "{P}" ({total} lines); '
        f"insert after a line from 0 (the top) to {total}"
    )


def test_patch_replaces_the_lines_between_exact_context() -> None:
    text = "def f():\n    a = 1\n    b = 2\n    return a\n"
    result = patch(text, hunk("     a = 1", "-    b = 2", "+    b = 3", "     return a"))
    assert result == "def f():\n    a = 1\n    b = 3\n    return a\n"


def test_patch_hunks_apply_in_file_order_each_after_the_previous() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    result = patch(text, hunk("-x = 1", "+x = 10"), hunk("-x = 1", "+x = 20"))
    assert result == "x = 10\ny = 2\nx = 20\n"


def test_patch_anchor_finds_the_line_then_the_hunk_after_it() -> None:
    text = "class A:\n    v = 1\nclass B:\n    v = 1\n"
    result = patch(text, hunk("-    v = 1", "+    v = 2", anchors=("class B:",)))
    assert result == "class A:\n    v = 1\nclass B:\n    v = 2\n"


def test_patch_at_end_matches_only_the_last_lines() -> None:
    text = "a\nb\na\nb\n"
    assert patch(text, hunk(" a", "-b", "+c", at_end=True)) == "a\nb\na\nc\n"


def test_patch_keeps_context_lines_byte_for_byte_and_adds_the_dominant_ending() -> None:
    text = "a\r\nb\nc\r\nd\r\n"
    assert patch(text, hunk(" b", "+x", " c")) == "a\r\nb\nx\r\nc\r\nd\r\n"


def test_patch_keeps_a_missing_final_newline() -> None:
    assert patch("a\nb", hunk(" a", "-b", "+c")) == "a\nc"
    assert patch("a\nb", hunk(" b", "+c", at_end=True)) == "a\nb\nc"
    assert patch("a\nb\n", hunk(" b", "+c", at_end=True)) == "a\nb\nc\n"


def test_patch_keeps_the_bom() -> None:
    assert patch("\ufeffa\nb\n", hunk("-a", "+x")) == "\ufeffx\nb\n"


def test_patch_pure_insertion_goes_after_its_anchor() -> None:
    assert patch("def f():\n    pass\n", hunk("+    # hi", anchors=("def f():",))) == (
        "def f():\n    # hi\n    pass\n"
    )


def test_patch_pure_insertion_into_an_empty_file_needs_nothing_to_place_it() -> None:
    assert patch("", hunk("+x", "+y")) == "x\ny\n"


def test_patch_pure_insertion_without_anchor_goes_after_the_previous_hunk() -> None:
    assert patch("a\nb\n", hunk("+x")) == "x\na\nb\n"
    assert patch("a\nb\nc\n", hunk("-a", "+A"), hunk("+x")) == "A\nx\nb\nc\n"


def test_patch_anchor_matches_an_indented_line_by_its_text() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    result = patch(text, hunk("-        return 1", "+        return 2", anchors=("def f(self):",)))
    assert result == "class A:\n    def f(self):\n        return 2\n"


def test_patch_repeating_an_anchor_already_passed_stays_in_place() -> None:
    text = "def f():\n    a = 1\n    b = 1\n"
    result = patch(
        text,
        hunk("-    a = 1", "+    a = 2", anchors=("def f():",)),
        hunk("-    b = 1", "+    b = 2", anchors=("def f():",)),
    )
    assert result == "def f():\n    a = 2\n    b = 2\n"


@pytest.mark.parametrize(
    "bad",
    [
        hunk("-  a = 1", "+a = 2"),  # indentation differs
        hunk("-a = 1 ", "+a = 2"),  # trailing space differs
        hunk("-a = 2", "+a = 3"),  # not there at all
        hunk("-a = 1", "+a = 2", anchors=("def g():",)),  # no such anchor
        hunk(" b", "+c", at_end=True),  # not the last lines
    ],
)
def test_patch_that_does_not_match_exactly_is_a_miss_naming_the_hunk(bad: FsPatchHunk) -> None:
    text = "a = 1\nb\nz\n"
    with pytest.raises(FsError) as info:
        patch(text, bad)
    assert info.value.code is FsErrorCode.EDIT_NOT_FOUND
    first, _, diagnosis = info.value.message.partition("\n")
    assert first == f'hunk 1 of the patch was not found in "{P}"'
    assert diagnosis  # the edit-miss diagnosis follows (SPEC §8.2)


def test_a_hunk_miss_gets_the_diagnosis_an_edit_miss_gets() -> None:
    with pytest.raises(FsError) as info:
        patch("def f():\n    a = 1\n", hunk("-  a = 1", "+  a = 2"))
    assert info.value.message == (
        f'hunk 1 of the patch was not found in "{P}"\n'
        "The closest text in the file is at line 2; it differs from the expected lines:\n"
        "- indentation: line 2 is indented 2 more spaces in the file than in the expected "
        "lines (line 2: 4 spaces vs 2 spaces)\n"
        "2:     a = 1\n"
        "To edit these lines, copy the expected lines from them exactly, without the "
        '"<n>: " prefixes.'
    )
    assert info.value.details["closest"] == {"start": 2, "end": 2}


def test_a_later_hunk_that_misses_fails_the_whole_patch() -> None:
    with pytest.raises(FsError) as info:
        patch("a\nb\n", hunk("-a", "+x"), hunk("-nope", "+y"))
    assert info.value.message.startswith(f'hunk 2 of the patch was not found in "{P}"\n')


def test_a_hunk_before_the_previous_one_is_a_miss() -> None:
    with pytest.raises(FsError):
        patch("a\nb\n", hunk("-b", "+y"), hunk("-a", "+x"))
