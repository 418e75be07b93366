"""glob, grep and list through a workspace, on every backend and with both engines (SPEC §8.1).

The expected text is the same everywhere: the engines and the providers must agree byte for
byte on the shared fixture tree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FS_OBSERVED

from .search_tree import BACKENDS, LONG, TREE

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "repo"
    path.mkdir()
    return path


@pytest.fixture(params=sorted(BACKENDS))
async def workspace(request: pytest.FixtureRequest, root: Path) -> AsyncIterator[Workspace]:
    async with BACKENDS[request.param](root, TREE) as built:
        yield built


async def call(workspace: Workspace, tool: str, **arguments: Any) -> str:
    result = await workspace.session().call(tool, arguments)
    assert not result.is_error, result.text
    return result.text


LONG_SHOWN = LONG.encode()[:2000].decode("utf-8", "ignore") + " (line truncated)"

GREP_NEEDLE = f"""\
Found 12 matches

README.md
Line 1: # needle project

docs/guide.md
Line 1: needle in docs

keep.log
Line 1: needle kept

notes/a b.txt
Line 1: needle with space in name

src/app.py
Line 1: def needle():
Line 2:     return 'needle'
Line 4: needle()

src/long.txt
Line 2: {LONG_SHOWN}
Line 3: end needle

src/uni.txt
Line 1: naïve needle café
Line 3: word_needle

src/util.py
Line 2: y = needle"""


async def test_grep_skips_hidden_ignored_and_binary_files_and_groups_by_path(
    workspace: Workspace,
) -> None:
    assert await call(workspace, "grep", pattern="needle") == GREP_NEEDLE


async def test_grep_regexes_mean_what_ripgrep_means(workspace: Workspace) -> None:
    assert await call(workspace, "grep", pattern=r"\bneedle\b", include="*.txt") == (
        "Found 4 matches\n\nnotes/a b.txt\nLine 1: needle with space in name\n\n"
        f"src/long.txt\nLine 2: {LONG.encode()[:2000].decode('utf-8', 'ignore')} "
        "(line truncated)\nLine 3: end needle\n\nsrc/uni.txt\nLine 1: naïve needle café"
    )
    # Unicode classes as in Rust: an Arabic-Indic digit is \d, `_` and letters are \w.
    assert await call(workspace, "grep", pattern=r"^\d", path="src") == (
        "Found 1 match\n\nsrc/uni.txt\nLine 2: ٣ digits"
    )
    assert await call(workspace, "grep", pattern=r"^\w+_needle$") == (
        "Found 1 match\n\nsrc/uni.txt\nLine 3: word_needle"
    )
    # As in ripgrep (without --crlf), `$` is before the `\n`, after any `\r`.
    assert await call(workspace, "grep", pattern="needle$", include="*.py") == "No matches found"
    assert await call(workspace, "grep", pattern="needle\\r?$", include="*.py") == (
        "Found 1 match\n\nsrc/util.py\nLine 2: y = needle"
    )
    assert await call(workspace, "grep", pattern="^$", path="src/app.py") == (
        "Found 1 match\n\nsrc/app.py\nLine 3: "
    )
    assert await call(workspace, "grep", pattern=r"needle\s+project|zzz") == (
        "Found 1 match\n\nREADME.md\nLine 1: # needle project"
    )


async def test_grep_include_narrows_by_file_name_and_never_adds_hidden_files(
    workspace: Workspace,
) -> None:
    assert await call(workspace, "grep", pattern="needle", include="*.{md,env}") == (
        "Found 2 matches\n\nREADME.md\nLine 1: # needle project\n\n"
        "docs/guide.md\nLine 1: needle in docs"
    )
    assert await call(workspace, "grep", pattern="needle", include="**/*.log") == (
        "Found 1 match\n\nkeep.log\nLine 1: needle kept"
    )


async def test_grep_of_a_file_named_by_path_searches_it_even_if_ignored_or_hidden(
    workspace: Workspace,
) -> None:
    assert await call(workspace, "grep", pattern="needle", path="debug.log") == (
        "Found 1 match\n\ndebug.log\nLine 1: needle debug"
    )
    assert await call(workspace, "grep", pattern="needle", path=".env") == (
        "Found 1 match\n\n.env\nLine 1: TOKEN=needle"
    )


async def test_grep_of_a_subdirectory_still_honours_the_ignore_files_above_it(
    workspace: Workspace,
) -> None:
    src_only = "Found 8 matches\n\n" + GREP_NEEDLE[GREP_NEEDLE.index("src/app.py") :]
    assert await call(workspace, "grep", pattern="needle", path="src") == src_only


async def test_grep_without_a_match_says_so(workspace: Workspace) -> None:
    assert await call(workspace, "grep", pattern="no such text") == "No matches found"


async def test_glob_finds_files_oldest_first_including_hidden_and_ignored_ones(
    workspace: Workspace,
) -> None:
    text = await call(workspace, "glob", pattern="*.md")
    assert sorted(text.splitlines()) == ["README.md", "docs/.hidden/secret.md", "docs/guide.md"]
    everything = (await call(workspace, "glob", pattern="**")).splitlines()
    assert sorted(everything) == sorted(path for path in TREE if not path.startswith(".git/"))
    assert await call(workspace, "glob", pattern="src/*.py") in (
        "src/app.py\nsrc/util.py",
        "src/util.py\nsrc/app.py",
    )
    assert await call(workspace, "glob", pattern="*.py", path="src/generated") == (
        "src/generated/gen.py"
    )
    assert await call(workspace, "glob", pattern="nothing*") == "No files found"


async def test_list_shows_one_directory_with_markers(workspace: Workspace) -> None:
    text = await call(workspace, "list", path="src")
    assert text.endswith(
        "<type>directory</type>\n<entries>\n.ignore\napp.py\ngenerated/\nlong.txt\n"
        "uni.txt\nutil.py\n</entries>"
    )


async def test_discovery_records_no_observation(workspace: Workspace) -> None:
    seen: list[object] = []
    workspace.context.events.on(FS_OBSERVED, seen.append)
    session = workspace.session()
    for tool, arguments in (
        ("grep", {"pattern": "needle", "path": "src/app.py"}),
        ("glob", {"pattern": "*.py"}),
        ("list", {}),
    ):
        assert not (await session.call(tool, arguments)).is_error
    assert seen == []
    edit = await session.call(
        "edit", {"file_path": "src/app.py", "old_string": "needle()", "new_string": "pin()"}
    )
    assert edit.code == "FS_NOT_OBSERVED"


async def test_bad_patterns_are_search_invalid_pattern_on_every_engine(
    workspace: Workspace,
) -> None:
    session = workspace.session()
    for tool, arguments, message in (
        ("grep", {"pattern": "(?=x)"}, 'invalid regex "(?=x)": invalid perl operator: (?='),
        ("grep", {"pattern": r"(a)\1"}, 'invalid regex "(a)\\1": invalid escape sequence: \\1'),
        ("grep", {"pattern": "a\\nb"}, "the literal '\\n' is not allowed in a regex"),
        ("grep", {"pattern": "[\\n]"}, "the literal '\\n' is not allowed in a regex"),
        ("glob", {"pattern": "[a"}, "unclosed character class; missing ']'"),
        ("glob", {"pattern": "{a,{b}}"}, "nested alternate groups are not allowed"),
        ("grep", {"pattern": "x", "include": "*.{a"}, "unclosed alternate group"),
    ):
        result = await session.call(tool, arguments)
        assert result.code == "SEARCH_INVALID_PATTERN", result.text
        assert message in result.text


async def test_a_class_naming_a_newline_among_other_members_is_accepted_as_ripgrep_does(
    workspace: Workspace,
) -> None:
    session = workspace.session()
    negated = await session.call("grep", {"pattern": "[^\\n]eedle"})
    plain = await session.call("grep", {"pattern": "needle"})
    assert not negated.is_error, negated.text
    assert negated.text == plain.text
    either = await session.call("grep", {"pattern": "[n\\n]eedle"})
    assert either.text == plain.text


async def test_missing_paths_and_files_where_a_directory_is_needed_are_errors(
    workspace: Workspace,
) -> None:
    session = workspace.session()
    cases = [
        ("grep", {"pattern": "x", "path": "missing"}, "FS_NOT_FOUND", "cannot search"),
        ("glob", {"pattern": "*", "path": "missing"}, "FS_NOT_FOUND", "cannot search"),
        ("list", {"path": "missing"}, "FS_NOT_FOUND", "not found"),
        ("glob", {"pattern": "*", "path": "README.md"}, "FS_NOT_DIRECTORY", "not a directory"),
        ("list", {"path": "README.md"}, "FS_NOT_DIRECTORY", "not a directory"),
        ("grep", {"pattern": "x", "path": "data/blob.bin"}, "FS_NOT_TEXT", "binary file"),
    ]
    for tool, arguments, code, words in cases:
        result = await session.call(tool, arguments)
        assert (result.code, words in result.text) == (code, True), (tool, result.text)
