"""Property tests: whatever path the model chooses, the sandbox never reaches outside its root.

Random paths are built from ``..``, ``.``, unicode names, symlinks pointing inside and outside
(file and directory links, dangling links, a loop) and absolute prefixes, over a real tree.
Each outcome is compared with a reference model (where the local provider lands:
``os.path.realpath`` of the lexically normalized path, inside iff ``os.path.commonpath``
with the root is the root), and independently, nothing outside the root ever changes and
no read ever returns outside content.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest
from dsh_fs.providers import SandboxFileSystem
from dsh_fs.providers.sandbox._paths import is_within

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]

T = TypeVar("T")

SECRET = "OUTSIDE-SECRET"
WRITTEN = "WRITTEN-BY-THE-MODEL"

NAMES = [
    "..",
    ".",
    "",
    "a",
    "b",
    "ünï",
    "日本.txt",
    "f.txt",
    "new.txt",
    "in_link",
    "out_link",
    "out_file",
    "up",
    "dangle_out",
    "dangle_in",
    "loop",
    "root",
    "root-evil",
    "outside",
    "back",
    "secret.txt",
]


@contextmanager
def world() -> Iterator[tuple[Path, Path]]:
    """A fresh tree: ``top/root`` (the sandbox) with links in and out, and outside content."""
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(os.path.realpath(scratch))
        root = top / "root"
        for directory in (root / "a" / "b", root / "ünï", top / "root-evil", top / "outside"):
            directory.mkdir(parents=True)
        (root / "f.txt").write_text("inside\n", encoding="utf-8")
        (root / "ünï" / "日本.txt").write_text("inside\n", encoding="utf-8")
        (top / "root-evil" / "f.txt").write_text(SECRET, encoding="utf-8")
        (top / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
        (top / "outside" / "f.txt").write_text(SECRET, encoding="utf-8")
        (top / "f.txt").write_text(SECRET, encoding="utf-8")
        (root / "in_link").symlink_to("a", target_is_directory=True)
        (root / "a" / "out_link").symlink_to("../../outside", target_is_directory=True)
        (root / "out_link").symlink_to(top / "outside", target_is_directory=True)
        (root / "out_file").symlink_to(top / "outside" / "secret.txt")
        (root / "up").symlink_to("..", target_is_directory=True)
        (root / "dangle_out").symlink_to(top / "outside" / "planted.txt")
        (root / "dangle_in").symlink_to("a/planted.txt")
        (root / "loop").symlink_to("loop")
        (top / "outside" / "back").symlink_to(root, target_is_directory=True)
        yield top, root


def snapshot(top: Path, skip: Path) -> dict[str, tuple[str, str]]:
    """Everything under `top` except below `skip`, without following links."""
    seen: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        if Path(dirpath) == skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path == skip:
                continue
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[str(path)] = ("dir", "")
            else:
                seen[str(path)] = ("file", path.read_text(encoding="utf-8", errors="replace"))
    return seen


def reference_inside(landing: str, root: Path) -> bool:
    return os.path.commonpath([landing, str(root)]) == str(root)


def reference_landing(root: Path, path: str) -> str:
    """Where the local provider operates: the real path of the lexically normalized path."""
    return os.path.realpath(os.path.normpath(os.path.join(root, path)))


paths = st.builds(
    lambda prefix, parts: prefix + "/".join(parts),
    st.sampled_from(["", "", "", "/", "<top>/", "<root>/", "<top>/root-evil/"]),
    st.lists(
        st.one_of(st.sampled_from(NAMES), st.text(st.characters(codec="utf-8"), max_size=4)),
        min_size=1,
        max_size=6,
    ),
).filter(lambda path: "\0" not in path)


def spell(path: str, top: Path, root: Path) -> str:
    return path.replace("<top>", str(top)).replace("<root>", str(root))


async def attempt(call: Awaitable[T]) -> tuple[str, T | None]:
    """('ok', result), ('denied', None), or ('error', None) for any other FsError."""
    try:
        return "ok", await call
    except FsError as error:
        return ("denied" if error.code is FsErrorCode.SANDBOX_DENIED else "error"), None


async def _outcome(call: Awaitable[object]) -> str:
    return (await attempt(call))[0]


def read_back(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def reference_lstat_landing(root: Path, path: str) -> str:
    """`lstat` does not follow the final component: the real parent plus the name."""
    display = os.path.normpath(os.path.join(root, path))
    head, name = os.path.split(display)
    return os.path.join(os.path.realpath(head), name) if name else display


@given(raw=paths)
async def test_no_path_reaches_outside_the_root(raw: str) -> None:
    with world() as (top, root):
        path = spell(raw, top, root)
        if not path:
            return
        fs = SandboxFileSystem([root])
        outside_before = snapshot(top, skip=root)
        landing = reference_landing(root, path)
        inside = reference_inside(landing, root)
        resolved, target = await attempt(fs.resolve(path))
        if target is None:
            # A path through a regular file names nothing: resolve says so (FS_NOT_FOUND)
            # only where reads may look, never about the outside.
            assert (resolved, inside) == ("error", True), (path, landing)
            return

        # Reads: refused exactly when the reference lands outside; never outside content.
        for result in (
            await _outcome(fs.stat(target)),
            await _outcome(fs.list_dir(target)),
            await _outcome(fs.list_dir_first(target, 5)),
        ):
            assert (result == "denied") is not inside, (path, landing)
        read, text = await attempt(fs.read_text(target))
        assert (read == "denied") is not inside, (path, landing)
        assert SECRET not in (text or ""), (path, landing)

        # Mutations: the same decision, and whatever happens, the outside stays untouched.
        write = await _outcome(fs.write_text(target, WRITTEN))
        assert (write == "denied") is not inside, (path, landing)
        edit = FsEditRequest(old_string="inside", new_string=WRITTEN)
        assert ((await _outcome(fs.edit_text(target, edit))) == "denied") is not inside
        if write == "ok":
            assert read_back(landing) == WRITTEN
        assert snapshot(top, skip=root) == outside_before, (path, landing)


@given(raw=paths)
async def test_lstat_is_confined_to_the_links_own_location(raw: str) -> None:
    with world() as (top, root):
        path = spell(raw, top, root)
        if not path:
            return
        fs = SandboxFileSystem([root])
        landing = reference_lstat_landing(root, path)
        result = await _outcome(fs.lstat(path))
        assert (result == "denied") is not reference_inside(landing, root), (path, landing)


components = st.lists(st.sampled_from(["a", "b", "ab", "a-b", "b.", "ü"]), max_size=4)


@given(path=components, root=components)
def test_component_containment_agrees_with_commonpath(path: list[str], root: list[str]) -> None:
    absolute_path, absolute_root = "/" + "/".join(path), "/" + "/".join(root)
    expected = os.path.commonpath([absolute_path, absolute_root]) == absolute_root
    assert is_within(absolute_path, absolute_root) is expected
