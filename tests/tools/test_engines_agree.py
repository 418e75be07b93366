"""ripgrep and the pure-Python engine give byte-identical results on the shared fixture tree.

Every pattern runs through a workspace twice, once with the provider's ripgrep and once with
the pure engine, on the local provider and in the sandbox; the rendered texts must be equal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.providers.local._ripgrep import find_rg

from .search_tree import write_local

pytestmark = pytest.mark.anyio

GREPS: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": r"\bneedle\b"},
    {"pattern": "^"},
    {"pattern": "e$"},
    {"pattern": "[A-Z]"},
    {"pattern": "(?i)NEEDLE"},
    {"pattern": "n.e", "include": "*.py"},
    {"pattern": "needle", "path": "src"},
    {"pattern": "needle", "path": "docs"},
    {"pattern": "café|naïve"},
    {"pattern": r"\s{4}"},
    {"pattern": r"\w+\(\)"},
    {"pattern": "x{900}"},
    {"pattern": r"\d"},
    {"pattern": r"\D\d"},
    {"pattern": r"[\w-]+\.md"},
    {"pattern": "^$"},
    {"pattern": "needle", "include": "*.{md,txt}"},
    {"pattern": "needle", "include": "[a-k]*"},
    {"pattern": "a|e|i|o|u"},
]

GLOBS: list[dict[str, Any]] = [
    {"pattern": "*"},
    {"pattern": "**"},
    {"pattern": "*.py"},
    {"pattern": "**/*.md"},
    {"pattern": "src/**"},
    {"pattern": "{README,keep}.*"},
    {"pattern": "[!a-z]*"},
    {"pattern": "?????.md"},
    {"pattern": "notes/*"},
    {"pattern": "*/*"},
    {"pattern": ".*"},
    {"pattern": "/src/*.txt"},
    {"pattern": "docs/"},
    {"pattern": "*", "path": "src"},
    {"pattern": "**/generated/*"},
    {"pattern": "*", "path": ".git"},
]


async def run_both(root: Path, sandbox: bool, tool: str, arguments: dict[str, Any]) -> list[str]:
    texts = []
    for native in (True, False):
        config = DiscoveryConfig(native=native)
        workspace = (
            Workspace.sandbox(root, discovery=config)
            if sandbox
            else Workspace.local(root, discovery=config)
        )
        async with workspace:
            result = await workspace.session().call(tool, arguments)
            texts.append(f"{result.code}: {result.text}")
    return texts


def test_the_ripgrep_binary_of_the_wheel_is_found() -> None:
    found = find_rg()
    assert found is not None
    assert Path(found).name in ("rg", "rg.exe")


@pytest.mark.parametrize("sandbox", [False, True], ids=["local", "sandbox"])
async def test_grep_is_the_same_on_both_engines(tmp_path: Path, sandbox: bool) -> None:
    write_local(tmp_path)
    for arguments in GREPS:
        native, pure = await run_both(tmp_path, sandbox, "grep", arguments)
        assert native == pure, arguments
        assert native.startswith("None: "), (arguments, native)


@pytest.mark.parametrize("sandbox", [False, True], ids=["local", "sandbox"])
async def test_glob_is_the_same_on_both_engines(tmp_path: Path, sandbox: bool) -> None:
    write_local(tmp_path)
    for arguments in GLOBS:
        native, pure = await run_both(tmp_path, sandbox, "glob", arguments)
        assert native == pure, arguments


async def test_a_capped_grep_keeps_the_same_first_matches_on_both_engines(tmp_path: Path) -> None:
    tree = {f"d{d}/f{f}.txt": b"hit\n" * 7 for d in range(12) for f in range(5)}
    write_local(tmp_path, tree)
    native, pure = await run_both(tmp_path, False, "grep", {"pattern": "hit"})
    assert native == pure
    assert native.startswith("None: Found 250 of 420 matches\n\nd0/f0.txt\nLine 1: hit\n")
    assert native.endswith(
        "(The complete result could not be saved; narrow pattern, path, or include to see more.)"
    )


async def test_a_sampled_glob_is_the_same_on_both_engines(tmp_path: Path) -> None:
    tree = {f"d{d}/f{f:03}.txt": b"" for d in range(3) for f in range(60)}
    write_local(tmp_path, tree)
    # Distinct times: files created in one clock tick tie, and ties are ordered by path in
    # the pure engine, by directory order in ripgrep.
    for index, rel in enumerate(sorted(tree, key=lambda rel: rel[::-1])):
        os.utime(tmp_path / rel, (1_600_000_000 + index, 1_600_000_000 + index))
    native, pure = await run_both(tmp_path, False, "glob", {"pattern": "*.txt"})
    assert native == pure
    assert native.endswith(
        "(Showing 100 of 180 paths, sampled across 3 of the 3 top-level entries this pattern "
        "matched instead of taken in modification-time order. The complete result could not "
        "be saved; narrow pattern or path to see more.)"
    )


async def test_a_root_inside_a_directory_its_parents_ignore_is_still_searched(
    tmp_path: Path,
) -> None:
    (tmp_path / ".ignore").write_text("ign/\n*.tmp\n", encoding="utf-8")
    root = tmp_path / "ign" / "sub" / "repo"
    write_local(root, {"a.txt": b"needle\n", "b.tmp": b"needle\n"})
    native, pure = await run_both(root, False, "grep", {"pattern": "needle"})
    assert native == pure == "None: Found 1 match\n\na.txt\nLine 1: needle"
