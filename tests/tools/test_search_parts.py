"""The pure engine's parts alone: line matching in bounded memory, the collectors, globs."""

from __future__ import annotations

import pytest

from dsh_fs.discovery import _lines
from dsh_fs.discovery._collect import MatchCollector, PathCollector
from dsh_fs.discovery._globs import compile_name_glob, compile_path_glob
from dsh_fs.discovery._lines import LineHit, LineScanner
from dsh_fs.discovery._regex import compile_line_regex
from dsh_fs.discovery._searching import line_text
from dsh_fs.errors import FsError, FsErrorCode


def scan(
    pattern: str, data: bytes, chunk: int | None = None, line_bytes: int = 2000
) -> list[tuple[int, bytes, bool]]:
    scanner = LineScanner(compile_line_regex(pattern), line_bytes, 250)
    step = chunk or max(1, len(data))
    for start in range(0, len(data), step):
        scanner.feed(data[start : start + step])
    scanner.finish()
    return [(hit.number, hit.line, hit.truncated) for hit in scanner.hits]


@pytest.mark.parametrize("chunk", [None, 1, 3, 7])
def test_lines_are_numbered_whatever_the_chunking(chunk: int | None) -> None:
    data = b"alpha\r\nbeta\n\ngamma alpha\nlast alpha"
    assert scan("alpha", data, chunk) == [
        (1, b"alpha", False),
        (4, b"gamma alpha", False),
        (5, b"last alpha", False),
    ]
    assert scan("^$", data, chunk) == [(3, b"", False)]


def test_an_empty_match_counts_every_line_but_not_one_after_the_last_newline() -> None:
    assert [number for number, _, _ in scan("", b"a\nb\n")] == [1, 2]
    assert scan("", b"") == []


def test_a_match_never_spans_two_lines() -> None:
    assert scan(r"beta\s+gamma", b"beta\ngamma\nbeta  gamma\n") == [(3, b"beta  gamma", False)]


def test_a_line_longer_than_long_line_is_searched_in_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_lines, "LONG_LINE", 1000)
    monkeypatch.setattr(_lines, "OVERLAP", 10)
    data = b"x" * 5000 + b"needle" + b"y" * 5000 + b"\nneedle next\n"
    assert scan("needle", data, 700, 20) == [(1, b"x" * 20, True), (2, b"needle next", False)]
    assert scan("^needle", data, 700, 20) == [(2, b"needle next", False)]
    assert scan("y$", data, 700, 20) == [(1, b"x" * 20, True)]
    assert scan(r"\bneedle", data, 700, 20) == [(2, b"needle next", False)]
    assert scan("xneedley", data, 700, 20) == [(1, b"x" * 20, True)]


def test_a_cut_line_keeps_whole_characters_only() -> None:
    assert line_text("aé".encode() * 3 + b"\xc3", True) == "aéaéaé"
    assert line_text(b"a\xff", False) == "a\ufffd"


def test_the_match_collector_keeps_the_first_matches_in_path_order() -> None:
    found = MatchCollector(3)
    for path in ("b/z", "a-b", "a/b", "c"):
        found.add(path, [LineHit(n, path.encode(), False) for n in (2, 1)], 2)
    assert found.total == 8
    assert [(path, hit.number) for path, hit in found.matches()] == [
        ("a/b", 1),
        ("a/b", 2),
        ("a-b", 1),
    ]


def test_the_path_collector_samples_round_robin_across_top_level_entries() -> None:
    found = PathCollector(3)
    for index, path in enumerate(["v/a", "v/b", "v/c", "v/d", "src/e", "guide/f"]):
        found.add(path, index)
    assert found.sample() == (["v/a", "src/e", "guide/f"], 3, 3)
    found = PathCollector(5)
    for index, path in enumerate(["v/a", "v/b", "v/c", "v/d", "src/e", "guide/f"]):
        found.add(path, index)
    assert found.sample() == (["v/a", "v/b", "v/c", "src/e", "guide/f"], 3, 3)


def test_the_path_collector_keeps_one_slot_per_entry_when_entries_outnumber_slots() -> None:
    found = PathCollector(2)
    for index, path in enumerate(["d/1", "c/1", "b/1", "a/1", "a/2"]):
        found.add(path, 10 - index)
    assert found.sample() == (["a/2", "b/1"], 2, 4)


def test_a_result_that_fits_is_oldest_first_then_by_path() -> None:
    found = PathCollector(10)
    for path, mtime in (("b", 5), ("a", 5), ("c", 1)):
        found.add(path, mtime)
    assert found.sample() == (["c", "a", "b"], 3, 3)


@pytest.mark.parametrize(
    ("glob", "matching", "not_matching"),
    [
        ("*.py", ["a.py", "x/y/a.py"], ["a.pyc", "py"]),
        ("src/*.py", ["src/a.py"], ["x/src/a.py", "src/x/a.py"]),
        ("/src/*.py", ["src/a.py"], ["x/src/a.py"]),
        ("**/b/*.c", ["b/x.c", "a/b/x.c"], ["b/x/y.c"]),
        ("a/**", ["a/x", "a/x/y"], ["a"]),
        ("{a,b}.txt", ["a.txt", "d/b.txt"], ["c.txt"]),
        ("[!a-c]?.md", ["dx.md"], ["ax.md", "d.md"]),
        ("\\*.txt", ["*.txt"], ["a.txt"]),
        ("dir/", [], ["dir", "dir/x"]),
    ],
)
def test_path_globs_follow_ripgrep(glob: str, matching: list[str], not_matching: list[str]) -> None:
    compiled = compile_path_glob(glob)
    assert [path for path in matching if compiled.matches_file(path)] == matching
    assert [path for path in not_matching if compiled.matches_file(path)] == []


@pytest.mark.parametrize(
    ("glob", "reason"),
    [
        ("[", "unclosed character class; missing ']'"),
        ("[z-a]", "invalid range; 'z' > 'a'"),
        ("{a,{b}}", "nested alternate groups are not allowed"),
        ("a\\", "dangling '\\'"),
    ],
)
def test_bad_globs_are_refused_in_ripgrep_words(glob: str, reason: str) -> None:
    with pytest.raises(FsError) as info:
        compile_name_glob(glob)
    assert info.value.code is FsErrorCode.SEARCH_INVALID_PATTERN
    assert info.value.message == f'invalid glob "{glob}": {reason}'
