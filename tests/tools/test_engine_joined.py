"""The pure engine searches small files joined: exactly what searching each alone finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.discovery._collect import MatchCollector
from dsh_fs.discovery._engine import _JOIN_UNSAFE, _scan_joined
from dsh_fs.discovery._lines import LineScanner
from dsh_fs.discovery._regex import compile_line_regex

PATTERNS = ["ab", "^a", "b$", "^$", "^", r"\bab\b", r"\Bb", "a*", "x", r"b\r$", "(?i)AB"]

texts = st.lists(
    st.text(alphabet="ab x\n\r", max_size=12).map(lambda text: text.encode("utf-8")),
    max_size=8,
)


def each_alone(files: list[tuple[str, bytes]], pattern: str) -> MatchCollector:
    regex = compile_line_regex(pattern)
    found = MatchCollector(250)
    for rel, data in files:
        scanner = LineScanner(regex, 2000, found.limit)
        scanner.feed(data)
        scanner.finish()
        if scanner.count:
            found.add(rel, scanner.hits, scanner.count)
    return found


@given(datas=texts, pattern=st.sampled_from(PATTERNS))
def test_joined_files_give_the_matches_of_each_file_searched_alone(
    datas: list[bytes], pattern: str
) -> None:
    files = [(f"f{index:02}", data) for index, data in enumerate(datas)]
    joined = MatchCollector(250)
    if files:
        _scan_joined(files, compile_line_regex(pattern), 2000, joined)
    alone = each_alone(files, pattern)
    assert (joined.matches(), joined.total) == (alone.matches(), alone.total)


@pytest.mark.parametrize("pattern", [r"\Aab", r"ab\z", "(?-m)^ab", "(?s-m)ab$"])
def test_patterns_that_see_where_a_text_starts_or_ends_are_not_joined(pattern: str) -> None:
    assert _JOIN_UNSAFE.search(pattern) is not None


@pytest.mark.parametrize("pattern", ["ab", "(?i)ab", "(?:a|b)", r"\bab", "^a$"])
def test_ordinary_patterns_are_joined(pattern: str) -> None:
    assert _JOIN_UNSAFE.search(pattern) is None


@pytest.mark.anyio
async def test_a_start_of_text_anchor_matches_in_every_small_file(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"f{index}.txt").write_bytes(b"ab\nab\n")
    workspace = Workspace.local(tmp_path, discovery=DiscoveryConfig(native=False))
    async with workspace:
        result = await workspace.session().call("grep", {"pattern": r"\Aab"})
    assert result.value is not None
    assert result.value["total"] == 5
