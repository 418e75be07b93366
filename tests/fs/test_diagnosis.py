"""The edit diagnosis (SPEC §8.2): what the model reads after a missed or ambiguous edit.

Snapshots pin the whole message for one case of each cause; the other tests pin the
bounds (size, scan budget), the edges (CRLF, BOM, huge needles) and the block API.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest, apply_edit
from dsh_fs.fs.diagnosis import diagnose_ambiguous, diagnose_block, diagnose_not_found
from dsh_fs.fs.diagnosis._wording import MAX_BYTES

P = "/w/f.py"
PY = (
    "def area(width, height):\n"
    '    """Rectangle area."""\n'
    "    return width * height\n"
    "\n"
    "\n"
    "def main():\n"
    "    print(area(2, 3))\n"
)
MISS = 'old_string was not found in "/w/f.py"\n'
COPY = 'To edit these lines, copy old_string from them exactly, without the "<n>: " prefixes.'


def edit_error(text: str, old: str, new: str = "x") -> FsError:
    with pytest.raises(FsError) as info:
        apply_edit(text, FsEditRequest(old_string=old, new_string=new), P)
    return info.value


def causes(error: FsError) -> list[str]:
    return [reason["cause"] for reason in error.details["reasons"]]


# --- one snapshot per cause ------------------------------------------------------------------

SNAPSHOTS: dict[str, tuple[str, str, str, str]] = {
    "indentation": (
        PY,
        'def area(width, height):\n  """Rectangle area."""\n  return width * height',
        "x",
        "The closest text in the file is at lines 1-3; it differs from old_string:\n"
        "- indentation: lines 2-3 are indented 2 more spaces in the file than in old_string "
        "(line 2: 4 spaces vs 2 spaces)\n"
        "1: def area(width, height):\n"
        '2:     """Rectangle area."""\n'
        "3:     return width * height\n" + COPY,
    ),
    "tabs_vs_spaces": (
        "all:\n\tcc -o app main.c\n\tstrip app\n",
        "all:\n    cc -o app main.c",
        "x",
        "The closest text in the file is at lines 1-2; it differs from old_string:\n"
        "- tabs vs spaces: line 2 is indented with tabs in the file, with spaces in "
        "old_string (line 2: 1 tab vs 4 spaces)\n"
        "1: all:\n"
        "2: \tcc -o app main.c\n" + COPY,
    ),
    "trailing_whitespace": (
        "one  \ntwo\n",
        "one\ntwo",
        "x",
        "The closest text in the file is at lines 1-2; it differs from old_string:\n"
        "- trailing whitespace: line 1 ends with 2 spaces in the file, with nothing in "
        "old_string\n"
        "1: one  \n"
        "2: two\n" + COPY,
    ),
    "line_number_prefixes": (
        PY,
        "6: def main():\n7:     print(area(2, 3))",
        "x",
        "The closest text in the file is at lines 6-7; it differs from old_string:\n"
        "- line-number prefixes: old_string starts its lines with numbers like '6: ' copied "
        "from read output; they are not part of the file's text\n"
        "6: def main():\n"
        "7:     print(area(2, 3))\n" + COPY,
    ),
    "lookalike": (
        "print(\u201chello\u201d)\n",
        'print("hello")',
        "x",
        "The closest text in the file is at line 1; it differs from old_string:\n"
        "- look-alike characters: line 1, column 7 has \u201c (U+201C LEFT DOUBLE QUOTATION "
        'MARK) in the file where old_string has " (U+0022 QUOTATION MARK) (1 more on line 1)\n'
        "1: print(\u201chello\u201d)\n" + COPY,
    ),
    "escaped_line_breaks": (
        PY,
        "def main():\\n    print(area(2, 3))",
        "x",
        "The closest text in the file is at lines 6-7; it differs from old_string:\n"
        '- escaped characters: old_string has "\\n" written as a backslash and a letter '
        "where the file has real line breaks\n"
        "6: def main():\n"
        "7:     print(area(2, 3))\n" + COPY,
    ),
    "line_differs": (
        PY,
        "    return width * depth",
        "x",
        "The closest text in the file is at line 3; it differs from old_string:\n"
        "- line 3 differs at column 20: the file has 'height' where old_string has 'depth'\n"
        "3:     return width * height\n" + COPY,
    ),
    "spacing": (
        PY,
        "    return width *height",
        "x",
        "The closest text in the file is at line 3; it differs from old_string:\n"
        "- spacing: line 3, column 19 has 1 space in the file where old_string has nothing\n"
        "3:     return width * height\n" + COPY,
    ),
    "missing_line": (
        PY,
        'def area(width, height):\n    """Rectangle area."""\n    assert width > 0\n'
        "    return width * height",
        "x",
        "The closest text in the file is at lines 1-3; it differs from old_string:\n"
        "- old_string's line 3 ('assert width > 0') is not in the file here (after line 2)\n"
        "1: def area(width, height):\n"
        '2:     """Rectangle area."""\n'
        "3:     return width * height\n" + COPY,
    ),
    "line_order": (
        PY,
        'def area(width, height):\n    return width * height\n    """Rectangle area."""',
        "x",
        "The closest text in the file is at lines 1-3; it differs from old_string:\n"
        '- line order: old_string\'s line 3 (\'"""Rectangle area."""\') is line 2 in the '
        "file, not after line 3\n"
        "1: def area(width, height):\n"
        '2:     """Rectangle area."""\n'
        "3:     return width * height\n" + COPY,
    ),
    "extra_line": (
        PY,
        "def area(width, height):\n    return width * height",
        "x",
        "The closest text in the file is at lines 1-3; it differs from old_string:\n"
        '- the file has line 2 (\'"""Rectangle area."""\') here, which old_string lacks\n'
        "1: def area(width, height):\n"
        '2:     """Rectangle area."""\n'
        "3:     return width * height\n" + COPY,
    ),
    "edge_line_break": (
        "a = 1\nb = 2",
        "a = 1\nb = 2\n",
        "x",
        "The closest text in the file is at lines 1-2; it differs from old_string:\n"
        "- line break: old_string ends with a line break, but line 2, the file's last line, "
        "has none\n"
        "1: a = 1\n"
        "2: b = 2\n" + COPY,
    ),
    "already_applied": (
        PY,
        "    print(area(2, 4))",
        "    print(area(2, 3))",
        "new_string is already in the file at line 7, and old_string is not: the edit looks "
        "already applied.\n"
        "7:     print(area(2, 3))\n"
        "Read the file to check before editing it again.",
    ),
    "nothing_close": (
        PY,
        "class Shape:\n    sides = 4",
        "x",
        "Nothing in the file is close to old_string: read the file to find the text you meant "
        "to change, or check the path.",
    ),
    "not_distinctive": (
        "".join(f"    if ok:\n        return {i}\n" for i in range(100)),
        "    if ok:\n        return None",
        "x",
        "Nothing close to old_string was found, and the parts of it that are in the file, "
        "such as 'if ok:', occur too often (over 64 times) to tell which place you meant: "
        "read that part of the file and include a line that occurs only there.",
    ),
}


@pytest.mark.parametrize("cause", sorted(SNAPSHOTS))
def test_each_cause_is_explained_in_these_exact_words(cause: str) -> None:
    text, old, new, diagnosis = SNAPSHOTS[cause]
    error = edit_error(text, old, new)
    assert error.code is FsErrorCode.EDIT_NOT_FOUND
    assert error.message == MISS + diagnosis
    assert causes(error) == [cause]


def test_an_ambiguous_edit_names_the_line_where_each_match_starts() -> None:
    with pytest.raises(FsError) as info:
        apply_edit(PY, FsEditRequest(old_string="(", new_string="[ "), P)
    assert info.value.code is FsErrorCode.AMBIGUOUS_EDIT
    assert info.value.message == (
        'old_string matched 4 times in "/w/f.py"; provide a more specific old_string or set '
        "replace_all to true\nThe matches start at lines 1, 6 and 7 (2 matches)."
    )
    assert dict(info.value.details) == {"lines": [1, 6, 7, 7], "count": 4}


def test_an_ambiguous_edit_names_the_first_twenty_starts_then_the_count() -> None:
    with pytest.raises(FsError) as info:
        apply_edit("x\n" * 30, FsEditRequest(old_string="x", new_string="y"), P)
    assert info.value.message.split("\n")[1] == (
        "The first 20 matches start at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
        "16, 17, 18, 19 and 20."
    )
    assert info.value.details["lines"] == list(range(1, 21))
    assert info.value.details["count"] == 30


def test_ambiguous_starts_in_a_crlf_file_are_counted_like_read() -> None:
    text = "a\r\nkey: 1\r\nb\r\nkey: 1\r\n"
    diagnosis = diagnose_ambiguous(text, "key: 1\n", 2, crlf=True)
    assert diagnosis.text == "The matches start at lines 2 and 4."


def test_ambiguous_starts_past_the_scan_budget_are_counted_not_named() -> None:
    text = "key\n" + "filler line\n" * 1000 + "key\n"
    diagnosis = diagnose_ambiguous(text, "key", 2, crlf=False, budget=100)
    assert diagnosis.text == (
        "The first matches start at lines 1; the file is too large to locate the other 1."
    )


# --- bounds ----------------------------------------------------------------------------------


def test_the_diagnosis_stays_under_its_byte_bound_with_long_lines_and_many_reasons() -> None:
    long = "x" * 5000
    text = "".join(f"    \u201cline\u201d {k} {long} \t\n" for k in range(40))
    old = "".join(f'  "line" {k} {long}y\n' for k in range(40))
    error = edit_error(text, old)
    diagnosis = error.message.split("\n", 1)[1]
    assert len(diagnosis.encode("utf-8")) <= MAX_BYTES
    assert "... (line truncated to 160 chars)" in diagnosis
    assert error.details["closest"] == {"start": 1, "end": 40}
    assert "(showing lines 1-" in diagnosis


def test_a_file_larger_than_the_scan_budget_is_not_searched_and_says_so() -> None:
    diagnosis = diagnose_not_found("a\n" * 600, "b", "c", crlf=False, budget=1000)
    assert diagnosis.text == (
        "The file is too large (1,200 characters; the search covers up to 1,000) to look for "
        "text close to old_string: read the lines you meant to change and copy old_string "
        "from the read output."
    )
    assert diagnosis.details == {
        "closest": None,
        "reasons": [{"cause": "too_large", "line": None, "message": diagnosis.text}],
    }


def test_a_search_cut_short_by_the_budget_says_a_closer_text_may_exist() -> None:
    text = "alpha = 1\n" * 40 + "def target(value):\n    return value\n"
    budget = len(text) + 50
    found = diagnose_not_found(
        text, "def target(value):\n  return value", "x", crlf=False, budget=budget
    )
    assert found.details["closest"] == {"start": 41, "end": 42}
    assert found.text.endswith(
        "(The file is large, so the search stopped early: a closer text may exist.)"
    )
    nothing = diagnose_not_found(
        text, "def missing_one(value):\n  return value", "x", crlf=False, budget=budget
    )
    assert nothing.text == (
        f"Nothing close to old_string was found, but the file is large ({len(text)} "
        "characters) and the search stopped early: read the lines you meant to change and "
        "copy old_string from the read output."
    )
    assert nothing.details["closest"] is None


def test_a_very_long_old_string_is_compared_by_its_first_lines() -> None:
    text = "".join(f"item_{k} = {k}\n" for k in range(400))
    old = "".join(f"item_{k} = {k + (k == 3)}\n" for k in range(300))
    error = edit_error(text, old)
    assert "(only the first lines of old_string were compared)" in error.message
    assert error.details["closest"] == {"start": 1, "end": 200}
    assert causes(error) == ["line_differs"]


# --- edges -----------------------------------------------------------------------------------


def test_crlf_lines_are_shown_and_numbered_as_read_shows_them() -> None:
    text = "\ufeffone\r\n    two\r\nthree\r\n"
    error = edit_error(text, "one\n  two")
    assert error.message.split("\n")[1:5] == [
        "The closest text in the file is at lines 1-2; it differs from old_string:",
        "- indentation: line 2 is indented 2 more spaces in the file than in old_string "
        "(line 2: 4 spaces vs 2 spaces)",
        "1: one",
        "2:     two",
    ]


def test_a_byte_order_mark_in_old_string_is_named_it_cannot_match() -> None:
    error = edit_error("\ufeffhello world\n", "\ufeffhello world")
    assert causes(error) == ["lookalike"]
    assert "U+FEFF ZERO WIDTH NO-BREAK SPACE, a byte order mark" in error.message


def test_equally_close_places_are_all_named() -> None:
    text = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"
    error = edit_error(text, "    return 2")
    assert error.details["closest"] == {"start": 2, "end": 2}
    assert error.details["also"] == [{"start": 6, "end": 6}]
    assert "(equally close: line 6)" in error.message


def test_new_string_elsewhere_does_not_hide_a_close_miss() -> None:
    text = "x = compute(1)\n\n\ny = compute(2)\nz = 3\n"
    error = edit_error(text, "y = compute(20)\nz = 3", "x = compute(1)")
    assert error.details["closest"] == {"start": 4, "end": 5}
    assert causes(error) == ["line_differs"]


def test_new_string_that_is_part_of_old_string_is_not_taken_for_an_applied_edit() -> None:
    error = edit_error(PY, "    return width * height * 2", "    return width * height")
    assert causes(error) == ["line_differs"]


def test_the_block_api_explains_expected_lines_without_an_edit() -> None:
    diagnosis = diagnose_block(PY.replace("\n", "\r\n"), "def main():\n  print(area(2, 3))", P)
    assert diagnosis.details["closest"] == {"start": 6, "end": 7}
    assert diagnosis.text.splitlines()[:2] == [
        "The closest text in the file is at lines 6-7; it differs from the expected lines:",
        "- indentation: line 7 is indented 2 more spaces in the file than in the expected "
        "lines (line 7: 4 spaces vs 2 spaces)",
    ]
    partial = diagnose_block(PY, "area(width, height):\n    return width * height", P)
    assert partial.details["closest"] == {"start": 1, "end": 3}
    # A block is whole lines: "area(...)" is not the end of line 1, it differs from it.
    assert [r["cause"] for r in partial.details["reasons"]] == ["line_differs", "extra_line"]
    nothing = diagnose_block(PY, "class Shape:\n    sides = 4", P)
    assert nothing.text == (
        'Nothing in "/w/f.py" is close to the expected lines: read the file to find the text '
        "you meant to change, or check the path."
    )


# --- never a crash, always bounded -----------------------------------------------------------

chars = st.sampled_from(list("ab xy\t\n\r\u00a0\u2019'\"-\u2014:1\ufeff"))


@given(text=st.text(chars, max_size=300), old=st.text(chars, min_size=1, max_size=60))
def test_any_miss_gets_a_bounded_json_diagnosis_naming_only_real_lines(text: str, old: str) -> None:
    body = text.removeprefix("\ufeff")
    crlf = "\r\n" in body
    if old.replace("\r\n", "\n") in body.replace("\r\n", "\n"):
        return
    diagnosis = diagnose_not_found(body, old.replace("\r\n", "\n"), "zz", crlf=crlf)
    assert len(diagnosis.text.encode("utf-8")) <= MAX_BYTES
    details: dict[str, Any] = json.loads(json.dumps(diagnosis.details))
    total = len(body.split("\n")) - (1 if body.endswith("\n") else 0)
    closest = details["closest"]
    if closest is not None:
        assert 1 <= closest["start"] <= closest["end"] <= max(total, 1)
    assert details["reasons"]


# --- issue 25: the patterns behind real misses -----------------------------------------------

DOTTED = (
    "import os\n\n\n"
    "def dotted(parts):\n"
    '    """Join the parts of a path."""\n'
    '    s = ".".join(parts)\n'
    "    return s\n\n\n"
    "def other():\n"
    "    return 1\n"
)


def test_a_verbatim_first_line_found_once_anchors_the_span_and_names_the_line_that_differs() -> (
    None
):
    error = edit_error(DOTTED, '    s = ".".join(parts)\n    return s.replace(".[", "[")')
    assert error.message == MISS + (
        "The closest text in the file is at lines 6-7; it differs from old_string:\n"
        "- partial match: old_string's line 1 is in the file exactly, and only at line 6; the "
        "first line that differs is line 7\n"
        '- old_string\'s line 2 (\'return s.replace(".[", "[")\') is not in the file here '
        "(after line 6)\n"
        '6:     s = ".".join(parts)\n'
        "7:     return s\n" + COPY
    )
    assert error.details["closest"] == {"start": 6, "end": 7}
    assert causes(error)[0] == "partial_match"


def test_a_verbatim_line_found_twice_anchors_nothing() -> None:
    text = DOTTED + '\n\ndef again(parts):\n    s = ".".join(parts)\n    return s\n'
    error = edit_error(text, '    s = ".".join(parts)\n    return s.replace(".[", "[")')
    assert "partial_match" not in causes(error)


def test_new_string_once_in_the_file_wins_over_a_similar_block_elsewhere() -> None:
    text = (
        "def first(items):\n    total = sum(items)\n    return total / len(items)\n\n\n"
        "def second(items):\n    total = sum(items)\n    return total\n"
    )
    error = edit_error(
        text,
        "    total = sum(items)\n    return total  # mean",
        "    total = sum(items)\n    return total / len(items)",
    )
    assert error.details["new_string_at"] == {"start": 2, "end": 3}
    assert error.details["also"] == [{"start": 7, "end": 8}]
    assert error.message == MISS + (
        "new_string is already in the file at lines 2-3, and old_string is not: the edit looks "
        "already applied. (Text similar to old_string is at lines 7-8.)\n"
        "2:     total = sum(items)\n"
        "3:     return total / len(items)\n"
        "Read the file to check before editing it again."
    )


def test_two_near_copies_scoring_close_are_both_named() -> None:
    text = (
        "def load_users(db):\n    rows = db.query('SELECT * FROM users')\n"
        "    return [User(r) for r in rows]\n\n\n"
        "def load_admins(db):\n    rows = db.query('SELECT * FROM admins')\n"
        "    return [User(r) for r in rows]\n"
    )
    error = edit_error(
        text, "    rows = db.query('SELECT * FROM people')\n    return [User(r) for r in rows]"
    )
    assert error.details["closest"] == {"start": 2, "end": 3}
    assert error.details["also"] == [{"start": 7, "end": 8}]
    assert error.message.split("\n")[1] == (
        "The closest text in the file is at lines 2-3; also similar: lines 7-8; it differs "
        "from old_string:"
    )


def test_adjacent_sibling_methods_are_named_apart_not_merged_into_one_span() -> None:
    # An exact line of the second method within the first one's margin used to pull the
    # first alignment across the blank line (lines 2-10), so only the second was named.
    text = (
        "class Shapes:\n"
        "    def area_square(self, side):\n        checked = self.validate(side)\n"
        '        result = checked * checked\n        self.log("square", result)\n'
        "        return result\n\n"
        "    def area_rect(self, width, height):\n        checked = self.validate(width)\n"
        '        result = checked * height\n        self.log("rect", result)\n'
        "        return result\n"
    )
    error = edit_error(
        text,
        "    def area_box(self, side):\n        checked = self.validate(side)\n"
        '        result = checked * height\n        self.log("box", result)\n'
        "        return result\n",
    )
    assert error.details["closest"] == {"start": 2, "end": 6}
    assert error.details["also"] == [{"start": 8, "end": 12}]
    assert error.message.split("\n")[1] == (
        "The closest text in the file is at lines 2-6; also similar: lines 8-12; it differs "
        "from old_string:"
    )


def test_a_short_needle_with_a_blank_line_the_file_lacks_is_found_without_it() -> None:
    text = (
        "describe('<Button />', () => {\n  it('renders', () => {\n    render(<Button />);\n"
        "  });\n\n  describe('prop: disabled', () => {\n    it('is disabled', () => {\n"
        "      expect(true).to.equal(true);\n    });\n  });\n});\n"
    )
    error = edit_error(text, "});\n\n});", "});\n\n  describe('prop: href', () => {});\n});")
    assert error.details["closest"] == {"start": 10, "end": 11}
    assert error.message == MISS + (
        "The closest text in the file is at lines 10-11; it differs from old_string:\n"
        "- old_string's line 2 is blank, and the file has no blank line there (line 10 is "
        "followed by line 11)\n"
        "10:   });\n11: });\n" + COPY
    )


def test_a_short_needle_indented_with_spaces_is_found_where_the_file_uses_tabs() -> None:
    text = "package main\n\nfunc main() {\n\tx = 1\n\ty := 2\n}\n"
    error = edit_error(text, "    x", "    y")
    assert error.message == MISS + (
        "The closest text in the file is at line 4; it differs from old_string:\n"
        "- tabs vs spaces: line 4 is indented with tabs in the file, with spaces in old_string "
        "(line 4: 1 tab vs 4 spaces)\n"
        "4: \tx = 1\n" + COPY
    )


def test_a_precomposed_letter_is_named_where_the_file_has_a_combining_mark() -> None:
    error = edit_error("menu:\n  caf\u0065\u0301 au lait\n", "caf\u00e9", "tea")
    assert error.details["closest"] == {"start": 2, "end": 2}
    assert error.message.split("\n")[2] == (
        "- look-alike characters: line 2, column 6 has \u00e9 (U+0065 + U+0301) in the file "
        "where old_string has \u00e9 (U+00E9) (the same letter, composed differently: "
        "Unicode NFC vs NFD)"
    )


def test_a_carriage_return_in_old_string_is_explained_in_a_crlf_file() -> None:
    error = edit_error("alpha\r\nbeta\r\n", "alpha\r", "q")
    assert causes(error) == ["line_endings"]
    assert error.details["closest"] == {"start": 1, "end": 1}
    assert error.message.split("\n")[2] == (
        "- line endings: old_string has \\r (carriage return) characters, but the file's CRLF "
        "line endings are matched as \\n: write each line break as \\n alone, without \\r"
    )


def test_ambiguous_matches_on_one_line_are_grouped_with_their_count() -> None:
    diagnosis = diagnose_ambiguous("a a a a\nb a a\nc a\n", "a", 7, crlf=False)
    assert diagnosis.text == "The matches start at lines 1 (4 matches), 2 (2) and 3."
    assert diagnosis.details["lines"] == [1, 1, 1, 1, 2, 2, 3]
    one = diagnose_ambiguous("x = x + x\n", "x", 3, crlf=False)
    assert one.text == "The matches start at line 1 (3 matches)."


# --- issue 41: stitched pieces, applied by evidence, loosely similar ----------------------------
# These are the cases the patterns were built on; the held-out ones are corpus cases
# (edit_recovery/corpus.py, "issue 41"), run once after the code was written.

METHODS = "class C:\n" + "".join(
    f"    def m{i}(self, value):\n        if value is None:\n"
    f"            return self.default_{i}\n        return self.convert_{i}(value)\n\n"
    for i in range(1, 40)
)


def test_old_string_stitched_from_pieces_far_apart_names_the_span_and_what_it_leaves_out() -> None:
    old = (
        "    def m3(self, value):\n        if value is None:\n"
        "    def m30(self, value):\n        if value is None:\n"
    )
    error = edit_error(METHODS, old)
    assert error.details["closest"] == {"start": 12, "end": 148}
    assert causes(error) == ["left_out_lines"]
    assert error.message == MISS + (
        "The closest text in the file is at lines 12-148, in pieces; it differs from "
        "old_string:\n"
        "- pieces: every line of old_string is in the file, in order, but as lines 12-13 and "
        "147-148, which are not adjacent: old_string leaves out lines 14-146 (133 lines) "
        "between them\n"
        "12:     def m3(self, value):\n"
        "13:         if value is None:\n"
        "14:             return self.default_3\n"
        "15:         return self.convert_3(value)\n"
        "16: \n"
        "147:     def m30(self, value):\n"
        "148:         if value is None:\n"
        "Edit each piece with its own old_string, or copy old_string from these lines exactly "
        'with the lines between the pieces, without the "<n>: " prefixes.'
    )


def test_pieces_that_occur_twice_are_not_taken_for_a_stitched_old_string() -> None:
    text = "a = compute(1)\nb = compute(2)\nc = 3\na = compute(1)\nd = 4\nb = compute(2)\n"
    error = edit_error(text, "a = compute(1)\nb = compute(2)\nd = 4")
    assert "left_out_lines" not in causes(error)


def test_applied_where_old_string_s_kept_lines_are_even_if_a_near_copy_is_a_word_away() -> None:
    text = (
        "def first(items):\n    total = sum(items)\n    count = len(items)\n"
        "    return total / count\n\n\n"
        "def second(values):\n    total = sum(values)\n    count = len(values)\n"
        "    return total\n"
    )
    old = "    total = sum(items)\n    count = len(items)\n    return total\n"
    new = "    total = sum(items)\n    count = len(items)\n    return total / count\n"
    error = edit_error(text, old, new)
    assert error.details["new_string_at"] == {"start": 2, "end": 4}
    assert error.message == MISS + (
        "new_string is already in the file at lines 2-4, and old_string is not: the edit looks "
        "already applied.\n"
        "2:     total = sum(items)\n"
        "3:     count = len(items)\n"
        "4:     return total / count\n"
        "Read the file to check before editing it again."
    )


def test_not_applied_while_the_lines_to_remove_are_still_there_even_if_new_string_is() -> None:
    text = (
        "import logging\nlog = logging.getLogger()\nlog.info('start')\n\n\n"
        "def run():\n    x = load()\n    return x\n"
    )
    error = edit_error(text, "def run():\n    x = load( )\n    return x\n", "log.info('start')")
    assert "new_string_at" not in error.details
    assert error.details["closest"] == {"start": 6, "end": 8}
    assert causes(error) == ["spacing"]


def test_new_string_present_apart_from_indentation_looks_applied() -> None:
    text = (
        "class A:\n    def run(self):\n        try:\n            x = load()\n"
        "            return x\n        except OSError:\n            return None\n"
    )
    old = "def run(self):\n    x = load()\n    return x\n"
    new = (
        "def run(self):\n    try:\n        x = load()\n        return x\n"
        "    except OSError:\n        return None"
    )
    error = edit_error(text, old, new)
    assert error.details["new_string_at"] == {"start": 2, "end": 7}
    assert error.message.split("\n")[1] == (
        "new_string is already in the file at lines 2-7 apart from indentation, and old_string "
        "is not: the edit looks already applied."
    )


CACHE = (
    "class Cache:\n"
    "    def fetch_entry(self, key: str, default: Any = None) -> Any:\n"
    "        if key in self.items:\n"
    "            return self.items[key]\n"
    "        return default\n"
    "\n"
    "    def store(self, key: str, value: Any) -> None:\n"
    "        self.items[key] = value\n"
)


def test_a_stale_signature_with_an_invented_body_is_named_loosely_by_its_unique_name() -> None:
    old = (
        "    def fetch_entry(self, key):\n        value = self._lookup(key)\n"
        "        if value is MISSING:\n            raise KeyError(key)\n        return value\n"
    )
    error = edit_error(CACHE, old)
    assert error.details["closest"] == {"start": 2, "end": 5}
    assert causes(error) == ["loosely_similar"]
    assert error.message == MISS + (
        "Nothing in the file is close to old_string; the most similar text is at lines 2-5, "
        "loosely:\n"
        "- loosely similar: nothing in the file is close to old_string, but line 2 defines "
        "'fetch_entry', as old_string's line 1 does, and no other line does; old_string may be "
        "stale or partly invented\n"
        "2:     def fetch_entry(self, key: str, default: Any = None) -> Any:\n"
        "3:         if key in self.items:\n"
        "4:             return self.items[key]\n"
        "5:         return default\n"
        "Read these lines, then copy old_string from the read output exactly."
    )


def test_a_name_the_file_defines_twice_anchors_nothing() -> None:
    text = CACHE + "\n\ndef fetch_entry(key):\n    return None\n"
    old = "    def fetch_entry(self, key):\n        raise NotImplementedError('invented')\n"
    error = edit_error(text, old)
    assert error.details["closest"] is None
    assert causes(error) == ["nothing_close"]


def test_an_alignment_short_of_close_is_named_as_loosely_similar() -> None:
    text = (
        "def handle(request):\n    user = request.user\n    if not user.is_active:\n"
        "        return forbidden()\n    return render(user)\n"
    )
    old = (
        "    user = request.user_or_none\n    if user is None or user.banned:\n"
        "        return forbidden()\n    return render_page(user, theme)\n"
    )
    error = edit_error(text, old)
    assert error.details["closest"] == {"start": 2, "end": 5}
    assert error.details["reasons"][0]["message"] == (
        "loosely similar: nothing in the file is close to old_string, but lines 2-5 have about "
        "61% of its text; old_string may be stale or partly invented"
    )


def test_a_line_said_missing_here_that_the_file_has_elsewhere_says_where_it_is() -> None:
    text = (
        "".join(
            f"def func_{i}(value):\n    total = value + {i * 7}\n    return total * {i}\n\n"
            for i in range(30)
        )
        + "report.write(final_summary)\n"
    )
    old = (
        "def func_3(value):\n    total = value + 21\n    report.write(final_summary)\n"
        "    return total * 3\n"
    )
    error = edit_error(text, old)
    missing = [r["message"] for r in error.details["reasons"] if r["cause"] == "missing_line"]
    assert missing == [
        "old_string's line 4 ('return total * 3') is line 15 of the file, not here (after line 121)"
    ]
    assert " is not in the file here " not in error.message
