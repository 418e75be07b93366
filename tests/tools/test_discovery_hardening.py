"""Hostile trees and patterns for glob, grep and list (issue 22): each is a clear result or
error, never a hang, a traceback or a forged line, on both engines."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.providers import SandboxFileSystem
from dsh_fs.runtime import ToolResult

pytestmark = pytest.mark.anyio

ENGINES = ["rg", "pure"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "root"
    path.mkdir()
    return path


@pytest.fixture(params=ENGINES)
def config(request: pytest.FixtureRequest) -> DiscoveryConfig:
    return DiscoveryConfig(native=request.param == "rg")


@pytest.fixture
async def local(root: Path, config: DiscoveryConfig) -> AsyncIterator[Workspace]:
    async with Workspace.local(root, discovery=config) as workspace:
        yield workspace


@pytest.fixture
async def sandbox(root: Path, config: DiscoveryConfig) -> AsyncIterator[Workspace]:
    fs = SandboxFileSystem([root])
    async with Workspace(fs, cwd=str(root), discovery=config) as workspace:
        yield workspace


async def call(workspace: Workspace, tool: str, **arguments: Any) -> ToolResult:
    # Longer than the 30 s search budget: a slow search must end as SEARCH_ABORTED itself.
    with anyio.fail_after(60):
        result = await workspace.session().call(tool, arguments)
    json.dumps(result.value, ensure_ascii=False).encode("utf-8")
    return result


@pytest.mark.parametrize(
    ("tool", "arguments", "kind"),
    [
        ("glob", {"pattern": "a\0*"}, "glob"),
        ("grep", {"pattern": "a\0"}, "regex"),
        ("grep", {"pattern": "a", "include": "*\0"}, "glob"),
    ],
)
async def test_a_nul_byte_in_a_pattern_or_include_is_an_invalid_pattern_on_both_engines(
    root: Path, local: Workspace, tool: str, arguments: dict[str, str], kind: str
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    result = await call(local, tool, **arguments)
    assert result.code == "SEARCH_INVALID_PATTERN"
    assert result.text.startswith(f'Error: invalid {kind} "')
    assert "\\x00" in result.text  # the NUL is shown escaped
    assert "a NUL byte is not allowed in a pattern" in result.text


BACKTRACKING = "*a" * 24 + "*:"
"""A glob that Python's backtracking `re` takes (for practical purposes) forever on a long
name of ``a``s: 24 stars over a 200-character name."""


async def test_a_backtracking_glob_against_a_long_name_ends_at_once_on_both_engines(
    root: Path, local: Workspace
) -> None:
    (root / ("a" * 200)).write_text("x\n", encoding="utf-8")
    assert (await call(local, "glob", pattern=BACKTRACKING)).text == "No files found"
    assert (await call(local, "glob", pattern="a*a*a")).text == "a" * 200


async def test_a_backtracking_include_against_a_long_name_ends_at_once_on_both_engines(
    root: Path, local: Workspace
) -> None:
    (root / ("a" * 200)).write_text("needle\n", encoding="utf-8")
    result = await call(local, "grep", pattern="needle", include=BACKTRACKING)
    assert result.text == "No matches found"


async def test_a_backtracking_ignore_rule_against_a_long_name_ends_at_once_on_both_engines(
    root: Path, local: Workspace
) -> None:
    (root / ".ignore").write_text(BACKTRACKING + "\n", encoding="utf-8")
    (root / ("a" * 200)).write_text("needle\n", encoding="utf-8")
    result = await call(local, "grep", pattern="needle")
    assert result.text == f"Found 1 match\n\n{'a' * 200}\nLine 1: needle"


async def test_the_time_budget_stops_a_pure_glob_over_many_names(root: Path) -> None:
    for index in range(50):
        (root / f"{'a' * 200}{index}").write_text("x\n", encoding="utf-8")
    config = DiscoveryConfig(native=False, time_budget=0.0)
    async with Workspace.local(root, discovery=config) as workspace:
        result = await call(workspace, "glob", pattern=BACKTRACKING)
    assert result.code == "SEARCH_ABORTED"


@pytest.mark.parametrize("name", [".ignore", ".gitignore", ".rgignore"])
async def test_a_fifo_ignore_file_is_never_opened_on_both_engines(
    root: Path, local: Workspace, name: str
) -> None:
    (root / ".git").mkdir()
    os.mkfifo(root / name)
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / name)
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("needle\n", encoding="utf-8")
    result = await call(local, "grep", pattern="needle")
    assert result.text == "Found 2 matches\n\na.txt\nLine 1: needle\n\nsub/b.txt\nLine 1: needle"


async def test_a_fifo_ignore_file_in_the_roots_parent_is_never_opened_on_both_engines(
    root: Path, local: Workspace
) -> None:
    os.mkfifo(root.parent / ".ignore")
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    assert (await call(local, "grep", pattern="needle")).text == (
        "Found 1 match\n\na.txt\nLine 1: needle"
    )


async def test_an_ignore_file_linked_to_a_device_is_never_read_on_both_engines(
    root: Path, local: Workspace
) -> None:
    (root / ".ignore").symlink_to("/dev/zero")
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    assert (await call(local, "grep", pattern="needle")).text == (
        "Found 1 match\n\na.txt\nLine 1: needle"
    )


async def test_an_ignore_file_linked_outside_the_sandbox_decides_nothing_on_both_engines(
    root: Path, sandbox: Workspace
) -> None:
    outside = root.parent / "outside-rules"
    outside.write_text("secret*\n", encoding="utf-8")
    (root / ".ignore").symlink_to(outside)
    (root / "secret.txt").write_text("needle\n", encoding="utf-8")
    assert (await call(sandbox, "grep", pattern="needle")).text == (
        "Found 1 match\n\nsecret.txt\nLine 1: needle"
    )


async def test_an_ignore_file_that_is_a_link_is_not_followed_on_both_engines(
    root: Path, sandbox: Workspace
) -> None:
    (root / "rules").write_text("secret*\n", encoding="utf-8")
    (root / ".ignore").symlink_to(root / "rules")
    (root / "secret.txt").write_text("needle\n", encoding="utf-8")
    assert (await call(sandbox, "grep", pattern="needle")).text == (
        "Found 1 match\n\nsecret.txt\nLine 1: needle"
    )


async def test_ignore_rules_of_nested_directories_keep_ripgreps_precedence_on_both_engines(
    root: Path, local: Workspace
) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("*.log\nbuild/\n", encoding="utf-8")
    (root / "pkg" / "build").mkdir(parents=True)
    (root / "pkg" / ".ignore").write_text("!keep.log\n/only-here.txt\n", encoding="utf-8")
    (root / "pkg" / "deep").mkdir()
    for rel in (
        "a.log",
        "pkg/keep.log",
        "pkg/b.log",
        "pkg/build/x.txt",
        "pkg/only-here.txt",
        "pkg/deep/only-here.txt",
        "pkg/deep/keep.log",
        "[x]*.txt",
    ):
        (root / rel).write_text("needle\n", encoding="utf-8")
    result = await call(local, "grep", pattern="needle")
    shown = [line for line in result.text.splitlines()[2:] if line and not line.startswith("Line")]
    assert shown == ["[x]*.txt", "pkg/deep/keep.log", "pkg/deep/only-here.txt", "pkg/keep.log"]


NAMES = {
    "forged\nLine 42: password = hunter2": "forged\\nLine 42: password = hunter2",
    "tab\there": "tab\\there",
    "esc\x1b[31mred": "esc\\x1b[31mred",
    "back\\slash\r": "back\\\\slash\\r",
}


async def test_names_with_control_characters_are_shown_escaped_by_glob_grep_and_list(
    root: Path, local: Workspace
) -> None:
    for name in NAMES:
        (root / name).write_text("needle\n", encoding="utf-8")
    (root / "plain\\name").write_text("needle\n", encoding="utf-8")
    glob = await call(local, "glob", pattern="*")
    grep = await call(local, "grep", pattern="needle")
    listing = await call(local, "list")
    expected = sorted([*NAMES.values(), "plain\\name"])
    assert sorted(glob.text.splitlines()) == expected
    assert glob.value is not None
    assert sorted(glob.value["paths"]) == expected
    assert sorted(line for line in grep.text.splitlines()[2:] if line and "needle" not in line) == (
        expected
    )
    assert grep.text.count("\nLine ") == len(expected)  # no forged "Line" of a name
    entries = listing.text.split("<entries>\n")[1].split("\n</entries>")[0].splitlines()
    assert sorted(entries) == expected
