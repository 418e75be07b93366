"""Rendering alone: the exact text of every glob, grep and list shape (SPEC §8.1; where SPEC
leaves the words open, upstream's)."""

from __future__ import annotations

from dsh_fs.discovery._render import render_glob, render_grep, render_list
from dsh_fs.discovery._values import GlobValue, GrepMatch, GrepValue, ListEntry, ListValue


def test_grep_groups_lines_by_file_separated_by_one_blank_line() -> None:
    value = GrepValue(
        matches=(
            GrepMatch(path="src/app.py", line_number=4, line="def main():"),
            GrepMatch(path="src/app.py", line_number=20, line="main()"),
            GrepMatch(path="tests/test_app.py", line_number=7, line="from app import main"),
        ),
        total=3,
    )
    assert render_grep(value) == (
        "Found 3 matches\n\nsrc/app.py\nLine 4: def main():\nLine 20: main()\n\n"
        "tests/test_app.py\nLine 7: from app import main"
    )


def test_grep_says_one_match_in_the_singular() -> None:
    value = GrepValue(matches=(GrepMatch(path="a", line_number=1, line="hit"),), total=1)
    assert render_grep(value) == "Found 1 match\n\na\nLine 1: hit"


def test_a_capped_grep_says_how_many_and_how_to_narrow() -> None:
    value = GrepValue(matches=(GrepMatch(path="a.ts", line_number=1, line="one"),), total=2)
    assert render_grep(value) == (
        "Found 1 of 2 matches\n\na.ts\nLine 1: one\n\n(The complete result could not be saved; "
        "narrow pattern, path, or include to see more.)"
    )


def test_a_cut_line_ends_with_line_truncated() -> None:
    value = GrepValue(
        matches=(GrepMatch(path="a", line_number=3, line="x" * 5, truncated=True),), total=1
    )
    assert render_grep(value) == "Found 1 match\n\na\nLine 3: xxxxx (line truncated)"


def test_no_match_and_no_file_have_their_own_sentences() -> None:
    assert render_grep(GrepValue(matches=(), total=0)) == "No matches found"
    assert render_glob(GlobValue(root=".", paths=(), total=0)) == "No files found"


def test_a_glob_that_fits_is_one_path_per_line() -> None:
    value = GlobValue(root=".", paths=("b.py", "a.py"), total=2, entries_shown=2, entries_total=2)
    assert render_glob(value) == "b.py\na.py"


def test_a_sampled_glob_says_across_how_many_top_level_entries() -> None:
    value = GlobValue(
        root=".",
        paths=("vendor/a.ts", "src/d.ts", "guide/e.md"),
        total=6,
        entries_shown=3,
        entries_total=4,
    )
    assert render_glob(value) == (
        "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n"
        "(Showing 3 of 6 paths, sampled across 3 of the 4 top-level entries this pattern matched "
        "instead of taken in modification-time order. Narrow path to inspect a specific subtree. "
        "The complete result could not be saved; narrow pattern or path to see more.)"
    )


def test_a_sample_reaching_every_entry_drops_the_narrowing_hint() -> None:
    value = GlobValue(
        root=".", paths=("v/a", "v/b", "s/d"), total=4, entries_shown=2, entries_total=2
    )
    assert render_glob(value) == (
        "v/a\nv/b\ns/d\n\n(Showing 3 of 4 paths, sampled across 2 of the 2 top-level entries "
        "this pattern matched instead of taken in modification-time order. "
        "The complete result could not be saved; narrow pattern or path to see more.)"
    )


def test_a_flat_capped_glob_keeps_the_plain_footer() -> None:
    value = GlobValue(root=".", paths=("a", "b"), total=3, entries_shown=2, entries_total=3)
    assert render_glob(value) == (
        "a\nb\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern "
        "or path to see more.)"
    )


def test_list_marks_directories_and_links() -> None:
    value = ListValue(
        path="/abs/dir",
        entries=(
            ListEntry(name=".env", type="file", size=3),
            ListEntry(name="README.md", type="file", size=10),
            ListEntry(name="link", type="symlink", size=4),
            ListEntry(name="src", type="directory", size=0),
        ),
        total=4,
    )
    assert render_list(value) == (
        "<path>/abs/dir</path>\n<type>directory</type>\n<entries>\n.env\nREADME.md\nlink@\n"
        "src/\n</entries>"
    )


def test_an_empty_directory_has_no_entry_lines() -> None:
    value = ListValue(path="/abs/empty", entries=(), total=0)
    assert render_list(value) == (
        "<path>/abs/empty</path>\n<type>directory</type>\n<entries>\n</entries>"
    )


def test_a_capped_list_ends_with_the_showing_line() -> None:
    entries = tuple(ListEntry(name=f"f{i}", type="file", size=0) for i in range(1000))
    value = ListValue(path="/big", entries=entries, total=100_000)
    assert render_list(value).endswith(
        "f999\n(Showing 1000 of 100000 entries. Use glob with a pattern, or list a "
        "subdirectory, to see the rest.)\n</entries>"
    )
