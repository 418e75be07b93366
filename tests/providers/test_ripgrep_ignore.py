"""The ignore rules a grep gives ripgrep: found by a walk of names (ripgrep run once), and
the walk's listing reused while every directory it read is proven unchanged."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.providers.local import _filesystem as _local
from dsh_fs.providers.local import _ripgrep_ignore
from dsh_fs.providers.local._ripgrep import find_rg
from dsh_fs.providers.local._ripgrep_ignore import (
    SETTLED_NS,
    IgnoreListing,
    IgnoreListings,
    Reader,
    list_ignore_files,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(find_rg() is None, reason="needs the ripgrep wheel's rg"),
]

_LONG_AGO_NS = 1_600_000_000 * 10**9
"""A modification time well before any test runs (September 2020)."""


def _tree(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root.resolve()


def _settle(root: Path) -> None:
    """Every directory of the tree modified long ago, as a tree no one is editing is."""
    for directory, _, _ in os.walk(root):
        os.utime(directory, ns=(_LONG_AGO_NS, _LONG_AGO_NS))


async def _grep_paths(workspace: Workspace) -> list[str]:
    with anyio.fail_after(60):  # a FIFO opened would hang here
        result = await workspace.session().call("grep", {"pattern": "needle"})
    assert not result.is_error, result.text
    assert result.value is not None
    return sorted(hit["path"] for hit in result.value["matches"])


class _Walks:
    """Counts the walks of names made for the ignore files."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = _ripgrep_ignore.list_ignore_files

        def counted(
            root: str, clock: Callable[[], int] = time.time_ns, read: Reader | None = None
        ) -> tuple[list[str], IgnoreListing | None]:
            self.count += 1
            return real(root, clock, read)

        monkeypatch.setattr(_ripgrep_ignore, "list_ignore_files", counted)


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
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/keep.txt"]
    assert log.read_text(encoding="utf-8").splitlines() == ["run"]


async def test_a_second_grep_of_a_settled_unchanged_tree_walks_no_directory_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path, {".gitignore": "*.log\n", "a/b/x.txt": "needle\n", "y.log": "needle\n"})
    _settle(root)
    walks = _Walks(monkeypatch)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/b/x.txt"]
        assert await _grep_paths(workspace) == ["a/b/x.txt"]
    assert walks.count == 1


async def test_an_ignore_file_added_after_a_grep_counts_in_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path, {"a/b/x.txt": "needle\n", "a/b/y.txt": "needle\n"})
    _settle(root)
    walks = _Walks(monkeypatch)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/b/x.txt", "a/b/y.txt"]
        (root / "a" / "b" / ".ignore").write_text("y.txt\n", encoding="utf-8")
        assert await _grep_paths(workspace) == ["a/b/x.txt"]
    assert walks.count == 2


async def test_an_ignore_file_in_a_new_directory_counts_in_the_next_grep(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a/x.txt": "needle\n"})
    _settle(root)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/x.txt"]
        (root / "a" / "new").mkdir()
        (root / "a" / "new" / ".ignore").write_text("hidden.txt\n", encoding="utf-8")
        (root / "a" / "new" / "hidden.txt").write_text("needle\n", encoding="utf-8")
        (root / "a" / "new" / "shown.txt").write_text("needle\n", encoding="utf-8")
        assert await _grep_paths(workspace) == ["a/new/shown.txt", "a/x.txt"]


async def test_an_ignore_file_added_then_hidden_by_setting_its_directorys_time_back_counts(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, {"a/x.txt": "needle\n", "a/y.txt": "needle\n"})
    _settle(root)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/x.txt", "a/y.txt"]
        (root / "a" / ".ignore").write_text("y.txt\n", encoding="utf-8")
        # The modification time is set back; the change time, which no one can set, moves.
        os.utime(root / "a", ns=(_LONG_AGO_NS, _LONG_AGO_NS))
        assert await _grep_paths(workspace) == ["a/x.txt"]


async def test_an_ignore_file_rewritten_in_place_counts_in_the_next_grep(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a/.ignore": "x.txt\n", "a/x.txt": "needle\n", "a/y.txt": "needle\n"})
    _settle(root)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/y.txt"]
        (root / "a" / ".ignore").write_text("y.txt\n", encoding="utf-8")  # the same inode
        assert await _grep_paths(workspace) == ["a/x.txt"]


async def test_an_ignore_file_replaced_by_a_fifo_after_a_grep_is_never_opened(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, {"a/.ignore": "x.txt\n", "a/x.txt": "needle\n", "a/y.txt": "needle\n"})
    _settle(root)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/y.txt"]
        (root / "a" / ".ignore").unlink()
        os.mkfifo(root / "a" / ".ignore")
        os.utime(root / "a", ns=(_LONG_AGO_NS, _LONG_AGO_NS))
        assert await _grep_paths(workspace) == ["a/x.txt", "a/y.txt"]


async def test_a_directory_swapped_for_another_after_a_grep_is_walked_again(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, {"a/x.txt": "needle\n", "b/.ignore": "x.txt\n", "b/x.txt": "needle\n"})
    _settle(root)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a/x.txt"]
        os.rename(root / "a", root / "old")
        os.rename(root / "b", root / "a")
        os.rename(root / "old", root / "b")
        _settle(root)
        assert await _grep_paths(workspace) == ["b/x.txt"]


def test_a_walk_that_meets_a_directory_changed_just_now_keeps_no_listing(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a/.ignore": "x\n", "b/c.txt": "c\n"})
    _settle(root)
    os.utime(root / "b", None)  # now
    found, listing = list_ignore_files(str(root))
    assert found == ["a/.ignore"]
    assert listing is None
    later = time.time_ns() + SETTLED_NS + 10**9
    found, listing = list_ignore_files(str(root), lambda: later)
    assert found == ["a/.ignore"]
    assert listing is not None
    assert listing.unchanged(str(root))


def test_a_walk_of_more_directories_than_it_may_keep_keeps_no_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path, {f"d{index}/.ignore": "x\n" for index in range(5)})
    _settle(root)
    monkeypatch.setattr(_ripgrep_ignore, "LISTED_DIRECTORIES", 3)
    found, listing = list_ignore_files(str(root))
    assert sorted(found) == [f"d{index}/.ignore" for index in range(5)]
    assert listing is None
    listings = IgnoreListings()
    assert sorted(listings.found(str(root))) == sorted(found)


def test_the_walk_finds_ignore_files_of_any_kind_but_not_below_hidden_directories_or_links(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path / "tree",
        {
            ".ignore": "x\n",
            "a/.rgignore": "x\n",
            ".hidden/.ignore": "x\n",
            "outside/.ignore": "x\n",
        },
    )
    os.mkfifo(root / "a" / ".gitignore")  # listed by name: the plan vets it (never opened)
    (root / "link").symlink_to(root / "outside", target_is_directory=True)
    found, _ = list_ignore_files(str(root))
    assert sorted(found) == [".ignore", "a/.gitignore", "a/.rgignore", "outside/.ignore"]


def test_a_walk_shared_between_threads_finds_every_ignore_file_and_proves_every_directory(
    tmp_path: Path,
) -> None:
    files = {f"d{a}/e{b}/.ignore": "x\n" for a in range(20) for b in range(3)}
    files |= {f"d{a}/.gitignore": "x\n" for a in range(0, 20, 2)}
    files |= {f"d{a}/e0/.hidden/.ignore": "x\n" for a in range(20)}  # below a hidden one
    root = _tree(tmp_path, files)
    _settle(root)
    found, listing = list_ignore_files(str(root))
    assert sorted(found) == sorted(rel for rel in files if "/.hidden/" not in rel)
    assert listing is not None
    assert len(listing.directories) == 1 + 20 + 20 * 3  # the root, d*, d*/e*
    assert listing.unchanged(str(root))
    (root / "d7" / "e2" / "new").mkdir()
    assert not listing.unchanged(str(root))


def test_a_provider_keeps_the_listings_of_its_last_eight_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [_tree(tmp_path / f"r{index}", {"a/.ignore": "x\n"}) for index in range(9)]
    for root in roots:
        _settle(root)
    walks = _Walks(monkeypatch)
    listings = IgnoreListings()
    for root in roots:
        assert listings.found(str(root)) == ["a/.ignore"]
    assert walks.count == 9
    assert listings.found(str(roots[8])) == ["a/.ignore"]  # kept
    assert walks.count == 9
    assert listings.found(str(roots[0])) == ["a/.ignore"]  # the oldest, dropped
    assert walks.count == 10


def _rg_paths(root: Path) -> list[str]:
    """What ripgrep itself finds for "needle", reading the ignore files on its own."""
    import subprocess

    rg = find_rg()
    assert rg is not None
    done = subprocess.run(
        [rg, "--no-config", "--files-with-matches", "needle", "."],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return sorted(line.removeprefix("./") for line in done.stdout.decode().splitlines())


def _rewrite_in_place(path: Path, data: bytes) -> None:
    with path.open("r+b") as file:
        file.truncate(0)
        file.write(data)


def _vetted_reader(path: str) -> tuple[bytes, os.stat_result] | None:
    from dsh_fs.providers import LocalGuards
    from dsh_fs.providers.local._ripgrep_ignore import read_ignore_file

    return read_ignore_file(path, ".", LocalGuards())


async def test_the_walk_skips_a_directory_a_plain_name_rule_ignores_and_grep_still_agrees_with_rg(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path / "tree",
        {
            ".gitignore": "node_modules/\n*.log\n",
            "src/a.txt": "needle\n",
            "node_modules/pkg/.ignore": "x\n",  # below a skipped directory: never met
            "node_modules/pkg/b.txt": "needle\n",
            "src/node_modules/c.txt": "needle\n",  # the rule holds at any depth
        },
    )
    _settle(root)
    os.utime(root / ".gitignore", ns=(_LONG_AGO_NS, _LONG_AGO_NS))
    found, listing = list_ignore_files(str(root), read=_vetted_reader)
    assert found == [".gitignore"]
    assert listing is not None
    assert {rel for rel, *_ in listing.directories} == {"", "src"}
    assert [rel for rel, *_ in listing.files] == [".gitignore"]
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["src/a.txt"] == _rg_paths(root)


@pytest.mark.parametrize(
    "files",
    [
        {".gitignore": "build/\n", ".ignore": "!build/\n"},  # a stronger file takes it back
        {".ignore": "build/\n", "sub/.gitignore": "!build/\n"},  # a deeper one does
        {".ignore": "build/\n", "sub/.rgignore": "!build/x.txt\n"},  # any negation counts
    ],
    ids=["negated-beside", "negated-below", "any-negation"],
)
async def test_a_negation_on_the_way_turns_skipping_off(
    tmp_path: Path, files: dict[str, str]
) -> None:
    tree = {
        **files,
        "sub/build/x.txt": "needle\n",
        "sub/build/.ignore": "y.txt\n",
        "sub/build/y.txt": "needle\n",
    }
    root = _tree(tmp_path / "tree", tree)
    _settle(root)
    found, listing = list_ignore_files(str(root), read=_vetted_reader)
    assert "sub/build/.ignore" in found  # walked: its rules reach the plan
    assert listing is not None
    assert "sub/build" in {rel for rel, *_ in listing.directories}


async def test_a_gitignore_outside_a_git_work_tree_skips_nothing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "build").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    (root / "build" / ".ignore").write_text("y.txt\n", encoding="utf-8")
    for name in ("x.txt", "y.txt"):
        (root / "build" / name).write_text("needle\n", encoding="utf-8")
    _settle(root)
    found, _ = list_ignore_files(str(root.resolve()), read=_vetted_reader)
    assert sorted(found) == [".gitignore", "build/.ignore"]
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["build/x.txt"]


async def test_a_rule_taken_out_of_an_ignore_file_lets_the_next_grep_meet_what_it_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(
        tmp_path / "tree",
        {
            ".gitignore": "build/\n",
            "a.txt": "needle\n",
            "build/.ignore": "y.txt\n",
            "build/x.txt": "needle\n",
            "build/y.txt": "needle\n",
        },
    )
    _settle(root)
    os.utime(root / ".gitignore", ns=(_LONG_AGO_NS, _LONG_AGO_NS))
    walks = _Walks(monkeypatch)
    async with Workspace.local(root) as workspace:
        assert await _grep_paths(workspace) == ["a.txt"]
        # Rewritten in place: no directory's times move, only the file's.
        _rewrite_in_place(root / ".gitignore", b"# nothing\n")
        assert await _grep_paths(workspace) == ["a.txt", "build/x.txt"] == _rg_paths(root)
    assert walks.count == 2


async def test_a_skipped_directory_resting_on_an_ignore_file_changed_just_now_keeps_no_listing(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "tree", {".gitignore": "build/\n", "build/x.txt": "x\n"})
    _settle(root)  # the directories only: the .gitignore was written just now
    found, listing = list_ignore_files(str(root), read=_vetted_reader)
    assert found == [".gitignore"]
    assert listing is None
    later = time.time_ns() + SETTLED_NS + 10**9
    found, listing = list_ignore_files(str(root), lambda: later, _vetted_reader)
    assert listing is not None
    assert [rel for rel, *_ in listing.files] == [".gitignore"]


def test_a_directory_without_subdirectories_has_its_ignore_files_found_by_name(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "tree", {"leaf/.rgignore": "x\n", "leaf/a.txt": "x\n"})
    (root / "leaf" / ".ignore").symlink_to(root / "missing")  # a dangling link is a name too
    os.mkfifo(root / "leaf" / ".gitignore")
    found, _ = list_ignore_files(str(root))  # "leaf" has a link count of 2 on ext4, tmpfs…
    assert sorted(found) == ["leaf/.gitignore", "leaf/.ignore", "leaf/.rgignore"]


async def test_rules_of_a_directory_with_a_line_break_in_its_name_keep_the_walk_out_of_nothing(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path / "tree",
        {
            "a\nb/.ignore": "build/\n",  # dropped by the plan: ripgrep enters a\nb/build
            "a\nb/build/.ignore": "y.txt\n",
            "a\nb/build/x.txt": "needle\n",
            "a\nb/build/y.txt": "needle\n",
        },
    )
    _settle(root)
    found, _ = list_ignore_files(str(root), read=_vetted_reader)
    assert "a\nb/build/.ignore" in found
    async with Workspace.local(root) as workspace:
        # Shown escaped; y.txt too: no rule of a directory below "a\nb" counts.
        assert await _grep_paths(workspace) == ["a\\nb/build/x.txt", "a\\nb/build/y.txt"]
