"""The ignore rules a grep gives ripgrep: found by a walk of names, ripgrep run once."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.providers import LocalGuards
from dsh_fs.providers.local import _filesystem as _local
from dsh_fs.providers.local._ripgrep import find_rg
from dsh_fs.providers.local._ripgrep_ignore import ignore_plan

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(find_rg() is None, reason="needs the ripgrep wheel's rg"),
]


def _tree(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root.resolve()


async def _grep_paths(root: Path) -> list[str]:
    async with Workspace.local(root) as workspace:
        result = await workspace.session().call("grep", {"pattern": "needle"})
    assert not result.is_error, result.text
    assert result.value is not None
    return sorted(hit["path"] for hit in result.value["matches"])


async def test_a_grep_runs_ripgrep_once_however_many_ignore_files_the_tree_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(
        tmp_path / "tree",
        {
            ".gitignore": "*.log\n",
            "a/.ignore": "skip.txt\n",
            "a/skip.txt": "needle\n",
            "a/keep.txt": "needle\n",
            "b.log": "needle\n",
        },
    )
    real = find_rg()
    assert real is not None
    log = tmp_path / "runs.log"
    wrapper = tmp_path / "rg"
    wrapper.write_text(f'#!/bin/sh\necho run >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(_local, "find_rg", lambda: str(wrapper))
    assert await _grep_paths(root) == ["a/keep.txt"]
    assert log.read_text(encoding="utf-8").splitlines() == ["run"]


def test_ignore_files_below_a_directory_ignored_by_name_are_never_read(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "node_modules/\n/build\n*.egg-info/\n",
            "node_modules/pkg/.ignore": "from-node-modules\n",
            "build/.ignore": "from-build\n",
            "x.egg-info/.ignore": "from-egg-info\n",
            "src/build/.ignore": "from-nested-build\n",
            "src/.ignore": "from-src\n",
        },
    )
    # A FIFO would hang whoever opened it: below an ignored directory nothing is even looked at.
    os.mkfifo(root / "node_modules" / ".rgignore")
    rules = ignore_plan(str(root), ".", LocalGuards()).rules.decode()
    assert "from-src" in rules
    # `/build` is anchored: it names the root's own child, not src/build.
    assert "from-nested-build" in rules
    for skipped in ("from-node-modules", "from-build", "from-egg-info"):
        assert skipped not in rules


def test_a_negation_in_force_keeps_the_walk_going_into_every_directory(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "gen*/\n!generated/\n",
            "generated/.ignore": "from-generated\n",
            "gen-old/.ignore": "from-gen-old\n",
        },
    )
    rules = ignore_plan(str(root), ".", LocalGuards()).rules.decode()
    assert "from-generated" in rules
    assert "from-gen-old" in rules


async def test_a_directory_re_included_by_a_negation_keeps_its_own_ignore_rules(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "gen*/\n!generated/\n",
            "generated/.ignore": "secret.txt\n",
            "generated/a.txt": "needle\n",
            "generated/secret.txt": "needle\n",
            "gen-old/b.txt": "needle\n",
        },
    )
    assert await _grep_paths(root) == ["generated/a.txt"]


async def test_an_anchored_rule_ignores_only_the_directory_it_names(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "/build/\n",
            "build/a.txt": "needle\n",
            "pkg/build/.ignore": "x.txt\n",
            "pkg/build/x.txt": "needle\n",
            "pkg/build/y.txt": "needle\n",
        },
    )
    assert await _grep_paths(root) == ["pkg/build/y.txt"]


async def test_rules_with_globs_beyond_a_plain_name_are_left_to_ripgrep(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "[ab]uild/\nout/**\ndeep/sub/\n",
            "build/a.txt": "needle\n",
            "out/b.txt": "needle\n",
            "deep/sub/c.txt": "needle\n",
            "deep/other/.ignore": "d.txt\n",
            "deep/other/d.txt": "needle\n",
            "deep/other/e.txt": "needle\n",
        },
    )
    assert await _grep_paths(root) == ["deep/other/e.txt"]
