"""Bad input for glob, grep and list: each is a clear result or error, never a hang or a
traceback, on both engines (SPEC §8.1, issue #11)."""

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


async def call(workspace: Workspace, tool: str, **arguments: Any) -> ToolResult:
    # Longer than the 30 s search budget: a slow search must end as SEARCH_ABORTED itself.
    with anyio.fail_after(60):
        result = await workspace.session().call(tool, arguments)
    json.dumps(result.value, ensure_ascii=False).encode("utf-8")  # always valid JSON text
    result.text.encode("utf-8")
    return result


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("glob", {"pattern": "a\ud800*"}),
        ("grep", {"pattern": "a\ud800"}),
        ("grep", {"pattern": "a", "include": "*\ud800"}),
    ],
)
async def test_a_lone_surrogate_in_a_pattern_is_an_invalid_pattern_on_both_engines(
    root: Path, local: Workspace, tool: str, arguments: dict[str, str]
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    result = await call(local, tool, **arguments)
    assert result.code == "SEARCH_INVALID_PATTERN"
    assert "not valid Unicode" in result.text


async def test_a_fifo_in_the_tree_is_never_opened(root: Path, local: Workspace) -> None:
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    assert (await call(local, "grep", pattern="needle")).text == (
        "Found 1 match\n\na.txt\nLine 1: needle"
    )
    assert (await call(local, "glob", pattern="*")).text == "a.txt"
    assert (await call(local, "list")).text.endswith("<entries>\na.txt\npipe\n</entries>")
    named = await call(local, "grep", pattern="x", path="pipe")
    assert (named.code, named.text) == (
        "FS_NOT_REGULAR_FILE",
        f'Error: cannot search "{root}/pipe": not a regular file',
    )


async def test_directory_loops_through_links_are_not_followed(root: Path, local: Workspace) -> None:
    (root / "a").mkdir()
    (root / "a" / "f.txt").write_text("needle\n", encoding="utf-8")
    (root / "a" / "up").symlink_to("..")
    (root / "loop").symlink_to(".")
    (root / "link.txt").symlink_to("a/f.txt")
    assert (await call(local, "grep", pattern="needle")).text == (
        "Found 1 match\n\na/f.txt\nLine 1: needle"
    )
    assert (await call(local, "glob", pattern="**")).text == "a/f.txt"
    assert (await call(local, "list")).text.endswith("<entries>\na/\nlink.txt@\nloop@\n</entries>")


async def test_a_64_mib_line_is_cut_and_the_match_still_found(root: Path, local: Workspace) -> None:
    with (root / "huge.txt").open("wb") as f:
        f.write(b"a" * (64 << 20))
        f.write(b" needle\nnext line\n")
    result = await call(local, "grep", pattern="needle")
    assert result.text == f"Found 1 match\n\nhuge.txt\nLine 1: {'a' * 2000} (line truncated)"
    start = await call(local, "grep", pattern="^a{3}", path="huge.txt")
    assert start.text.startswith("Found 1 match")


def make_non_utf8_names(root: Path) -> None:
    os.mkdir(os.fsencode(root) + b"/d\xff")
    with open(os.fsencode(root) + b"/d\xff/caf\xe9.txt", "wb") as f:
        f.write(b"needle\n")


async def test_names_that_are_not_utf8_are_shown_escaped(root: Path, local: Workspace) -> None:
    make_non_utf8_names(root)
    assert (await call(local, "glob", pattern="*.txt")).text == "d\\xff/caf\\xe9.txt"
    assert (await call(local, "grep", pattern="needle")).text == (
        "Found 1 match\n\nd\\xff/caf\\xe9.txt\nLine 1: needle"
    )
    assert (await call(local, "list")).text.endswith("<entries>\nd\\xff/\n</entries>")


async def test_a_search_past_its_budget_is_search_aborted(root: Path) -> None:
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    for native in (True, False):
        config = DiscoveryConfig(time_budget=0, native=native)
        async with Workspace.local(root, discovery=config) as workspace:
            for tool in ("grep", "glob"):
                result = await call(workspace, tool, pattern="needle")
                assert result.code == "SEARCH_ABORTED"
                narrow = "pattern, path, or include" if tool == "grep" else "pattern or path"
                assert result.text == (
                    f'Error: cannot search "{root}": stopped after 0 seconds; '
                    f"narrow {narrow} and retry"
                )
    assert children_named("rg") == []


def children_named(name: str) -> list[int]:
    """Live child processes of this one with that command name (Linux ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)
        except OSError:
            continue
        command = fields[0].partition("(")[2]
        parent = int(fields[1].split()[1])
        if parent == os.getpid() and command == name:
            found.append(int(entry))
    return found


async def test_ripgrep_reads_no_configuration_file(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pre-ran"
    script = tmp_path / "pre.sh"
    script.write_text(f'#!/bin/sh\ntouch {marker}\ncat "$1"\n', encoding="utf-8")
    script.chmod(0o755)
    config = tmp_path / "rgrc"
    config.write_text(f"--pre={script}\n", encoding="utf-8")
    (root / "a.txt").write_text("needle\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RIPGREP_CONFIG_PATH", str(config))
        async with Workspace.local(root) as workspace:
            result = await call(workspace, "grep", pattern="needle")
    assert result.text == "Found 1 match\n\na.txt\nLine 1: needle"
    assert not marker.exists()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "outside"
    path.mkdir()
    return path


async def test_the_fence_holds_for_discovery(
    root: Path, outside: Path, config: DiscoveryConfig
) -> None:
    (root / "src").mkdir(parents=True)
    (outside / "secret.txt").write_text("needle outside\n", encoding="utf-8")
    (root / "src" / "in.txt").write_text("needle inside\n", encoding="utf-8")
    (root / "out").symlink_to(outside)
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (outside / "into").symlink_to(root / "src")
    async with Workspace.sandbox(root, discovery=config) as workspace:
        assert (await call(workspace, "grep", pattern="needle")).text == (
            "Found 1 match\n\nsrc/in.txt\nLine 1: needle inside"
        )
        assert (await call(workspace, "glob", pattern="**")).text == "src/in.txt"
        for tool, arguments in (
            ("grep", {"pattern": "needle", "path": str(outside)}),
            ("grep", {"pattern": "needle", "path": "out"}),
            ("grep", {"pattern": "needle", "path": "out.txt"}),
            ("glob", {"pattern": "*", "path": ".."}),
            ("list", {"path": "out"}),
        ):
            result = await call(workspace, tool, **arguments)
            assert result.code == "FS_SANDBOX_DENIED", (tool, arguments, result.text)
            assert "use a path inside the workspace" in result.text
        # A link from outside into the root is inside: it names files of the root.
        inward = await call(workspace, "grep", pattern="needle", path=str(outside / "into"))
        assert inward.text == f"Found 1 match\n\n{outside}/into/in.txt\nLine 1: needle inside"


@pytest.mark.slow
async def test_a_tree_of_200000_files_is_searched_within_the_budget(
    root: Path, local: Workspace
) -> None:
    for d in range(200):
        directory = root / f"d{d:03}"
        directory.mkdir()
        for f in range(1000):
            (directory / f"f{f:04}.txt").write_bytes(b"nothing to see\n")
    (root / "d100" / "f0500.txt").write_bytes(b"the needle\n")
    grep = await call(local, "grep", pattern="needle")
    # On a slow machine the pure engine may run out of budget: then it says so, clearly.
    assert grep.text == "Found 1 match\n\nd100/f0500.txt\nLine 1: the needle" or (
        grep.code == "SEARCH_ABORTED" and "stopped after 30 seconds" in grep.text
    )
    glob = await call(local, "glob", pattern="*.txt")
    assert glob.text.endswith("narrow pattern or path to see more.)")
    assert "(Showing 100 of 200001 paths" not in glob.text
    assert "(Showing 100 of 200000 paths" in glob.text
