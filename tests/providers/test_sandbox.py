"""Security tests of `SandboxFileSystem`: every escape is refused and leaves the disk as it was.

The tree: ``root/`` (the sandbox), ``root-evil/`` (a sibling sharing the root's prefix) and
``outside/``, each with a file. Every refusal asserts the code, the exact message and a
snapshot of the whole tree (names, types, link targets, contents) before and after.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    CreateIfAbsent,
    FsCapture,
    FsEdit,
    FsEditOutcome,
    FsEditRequest,
    FsFileType,
    FsSmallRead,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWriteOutcome,
    WriteGuard,
)
from dsh_fs.providers import LocalFileSystem, LocalGuards, SandboxFileSystem
from dsh_fs.providers.local._guards import UNGUARDED
from dsh_fs.providers.local._staging import STAGE_PREFIX

pytestmark = pytest.mark.anyio

Mode = Literal["read-only", "workspace-write", "full-access"]
Snapshot = dict[str, tuple[str, str]]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "inside.txt").write_text("inside\n", encoding="utf-8")
    (tmp_path / "root" / "sub" / "deep.txt").write_text("deep\n", encoding="utf-8")
    (tmp_path / "root-evil").mkdir()
    (tmp_path / "root-evil" / "evil.txt").write_text("evil\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n", encoding="utf-8")
    return tmp_path


def snapshot(top: Path) -> Snapshot:
    """Every name under `top` (hidden ones included), without following links."""
    seen: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[rel] = ("dir", "")
            else:
                seen[rel] = ("file", path.read_text(encoding="utf-8", errors="replace"))
    return seen


def sandbox(tree: Path, mode: Mode = "workspace-write", **options: Any) -> SandboxFileSystem:
    return SandboxFileSystem([tree / "root"], mode=mode, **options)


def denied(verb: str, path: Path | str, mode: Mode = "workspace-write") -> str:
    return (
        f'cannot {verb} "{path}": outside the sandbox '
        f"[sandbox: file access denied under {mode} mode]"
    )


def read_only(verb: str, path: Path | str) -> str:
    return (
        f'cannot {verb} "{path}": the sandbox is read-only '
        "[sandbox: file access denied under read-only mode]"
    )


async def assert_refused(tree: Path, call: Callable[[], Awaitable[object]], message: str) -> None:
    """`call` fails with FS_SANDBOX_DENIED and `message`, and nothing on disk changed."""
    before = snapshot(tree)
    with pytest.raises(FsError) as caught:
        await call()
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == message
    assert snapshot(tree) == before


async def assert_every_access_refused(
    fs: SandboxFileSystem, tree: Path, path: str, shown: Path
) -> None:
    """Reads, writes and edits of `path` (shown to the model as `shown`) are all refused."""
    target = await fs.resolve(path)
    assert target.display_path == str(shown)
    edit = FsEditRequest(old_string="secret", new_string="pwned")
    await assert_refused(tree, lambda: fs.read_text(target), denied("read", shown))
    await assert_refused(tree, lambda: fs.read_bytes(target, 100), denied("read", shown))
    await assert_refused(tree, lambda: fs.stat(target), denied("read", shown))
    await assert_refused(tree, lambda: fs.write_text(target, "pwned\n"), denied("write", shown))
    await assert_refused(
        tree, lambda: fs.write_text(target, "pwned\n", CreateIfAbsent()), denied("write", shown)
    )
    await assert_refused(tree, lambda: fs.edit_text(target, edit), denied("edit", shown))
    await assert_refused(tree, lambda: fs.delete(target), denied("delete", shown))


# --- construction --------------------------------------------------------------------------


def test_a_missing_root_is_a_clear_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        SandboxFileSystem([tmp_path / "nope"])


def test_a_file_as_root_is_a_clear_value_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a directory"):
        SandboxFileSystem([tmp_path / "f"])


def test_no_roots_or_an_unknown_mode_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one root"):
        SandboxFileSystem([])
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        SandboxFileSystem([tmp_path], mode="yolo")  # type: ignore[arg-type]


def test_roots_are_canonicalized_through_symlinks(tree: Path) -> None:
    (tree / "alias").symlink_to(tree / "root")
    fs = SandboxFileSystem([tree / "alias", str(tree / "outside" / ".." / "root-evil")])
    assert fs.roots == (os.path.realpath(tree / "root"), os.path.realpath(tree / "root-evil"))


# --- paths the model may choose --------------------------------------------------------------


async def test_relative_paths_inside_the_root_work_normally(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve("sub/../new.txt")
    assert target.display_path == str(tree / "root" / "new.txt")
    outcome = await fs.write_text(target, "hello\n", CreateIfAbsent())
    assert outcome.operation == "create"
    assert await fs.read_text(target) == "hello\n"
    assert (tree / "root" / "new.txt").read_text(encoding="utf-8") == "hello\n"
    edited = await fs.edit_text(target, FsEditRequest(old_string="hello", new_string="bye"))
    assert edited.after == "bye\n"
    assert [e.name for e in await fs.list_dir(await fs.resolve("."))] == [
        "inside.txt",
        "new.txt",
        "sub",
    ]


async def test_a_sibling_sharing_the_roots_prefix_is_outside(tree: Path) -> None:
    fs = sandbox(tree)
    shown = tree / "root-evil" / "evil.txt"
    await assert_every_access_refused(fs, tree, str(shown), shown)
    await assert_every_access_refused(fs, tree, "../root-evil/evil.txt", shown)
    evil_dir = await fs.resolve(str(tree / "root-evil"))
    await assert_refused(tree, lambda: fs.list_dir(evil_dir), denied("read", tree / "root-evil"))
    await assert_refused(
        tree, lambda: fs.list_dir_first(evil_dir, 5), denied("read", tree / "root-evil")
    )


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "sub/../../outside/secret.txt", "./sub/../../outside/secret.txt"],
)
async def test_dot_dot_escapes_are_refused(tree: Path, path: str) -> None:
    fs = sandbox(tree)
    await assert_every_access_refused(fs, tree, path, tree / "outside" / "secret.txt")


async def test_dot_dot_above_the_root_directory_itself_is_refused(tree: Path) -> None:
    fs = sandbox(tree)
    parent = await fs.resolve("..")
    await assert_refused(tree, lambda: fs.list_dir(parent), denied("read", tree))
    top = await fs.resolve("/" + "../" * 40)
    await assert_refused(tree, lambda: fs.list_dir(top), denied("read", "/"))


async def test_absolute_paths_outside_are_refused(tree: Path) -> None:
    fs = sandbox(tree)
    shown = tree / "outside" / "secret.txt"
    await assert_every_access_refused(fs, tree, str(shown), shown)
    passwd = await fs.resolve("/etc/passwd")
    await assert_refused(tree, lambda: fs.read_text(passwd), denied("read", "/etc/passwd"))


async def test_absolute_paths_inside_are_allowed(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve(str(tree / "root" / "inside.txt"))
    assert await fs.read_text(target) == "inside\n"


async def test_a_cwd_outside_does_not_widen_the_fence(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve("secret.txt", cwd=str(tree / "outside"))
    shown = tree / "outside" / "secret.txt"
    await assert_refused(tree, lambda: fs.read_text(target), denied("read", shown))
    await assert_refused(tree, lambda: fs.write_text(target, "x"), denied("write", shown))


async def test_a_relative_cwd_is_taken_from_the_first_root(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve("deep.txt", cwd="sub")
    assert target.display_path == str(tree / "root" / "sub" / "deep.txt")
    assert await fs.read_text(target) == "deep\n"


async def test_tilde_is_an_ordinary_name_inside_the_first_root(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tree / "outside"
    monkeypatch.setenv("HOME", str(home))
    fs = sandbox(tree)
    target = await fs.resolve("~/secret.txt")
    assert target.display_path == str(tree / "root" / "~" / "secret.txt")
    with pytest.raises(FsError) as missing:
        await fs.read_text(target)
    assert missing.value.code is FsErrorCode.NOT_FOUND
    await fs.write_text(target, "mine\n")
    assert (tree / "root" / "~" / "secret.txt").read_text(encoding="utf-8") == "mine\n"
    assert (home / "secret.txt").read_text(encoding="utf-8") == "secret\n"


@pytest.mark.parametrize("path", ["", "a\0b", "\0", "sub/\0/x"])
async def test_empty_and_nul_paths_are_not_found_errors(tree: Path, path: str) -> None:
    fs = sandbox(tree)
    before = snapshot(tree)
    with pytest.raises(FsError) as resolved:
        await fs.resolve(path)
    with pytest.raises(FsError) as lstated:
        await fs.lstat(path)
    assert resolved.value.code is lstated.value.code is FsErrorCode.NOT_FOUND
    shown = path.replace("\0", "\\0")
    assert resolved.value.message == (
        f'cannot resolve "{shown}": the path contains a NUL byte'
        if path
        else "cannot resolve an empty path"
    )
    assert snapshot(tree) == before


async def test_a_nul_in_the_cwd_is_a_not_found_error(tree: Path) -> None:
    fs = sandbox(tree)
    with pytest.raises(FsError) as caught:
        await fs.resolve("x", cwd="sub\0")
    assert caught.value.code is FsErrorCode.NOT_FOUND


# --- symlinks ------------------------------------------------------------------------------


async def test_a_file_symlink_pointing_outside_is_refused(tree: Path) -> None:
    (tree / "root" / "link.txt").symlink_to(tree / "outside" / "secret.txt")
    fs = sandbox(tree)
    # The model sees the path it asked for; the fence decides on where it really lands.
    await assert_every_access_refused(fs, tree, "link.txt", tree / "root" / "link.txt")


async def test_a_relative_file_symlink_climbing_out_is_refused(tree: Path) -> None:
    (tree / "root" / "sub" / "up.txt").symlink_to("../../outside/secret.txt")
    fs = sandbox(tree)
    await assert_every_access_refused(fs, tree, "sub/up.txt", tree / "root" / "sub" / "up.txt")


async def test_a_directory_symlink_pointing_outside_is_refused(tree: Path) -> None:
    (tree / "root" / "door").symlink_to(tree / "outside", target_is_directory=True)
    fs = sandbox(tree)
    await assert_every_access_refused(
        fs, tree, "door/secret.txt", tree / "root" / "door" / "secret.txt"
    )
    await assert_every_access_refused(fs, tree, "door/new.txt", tree / "root" / "door" / "new.txt")
    await assert_every_access_refused(
        fs, tree, "door/a/b/new.txt", tree / "root" / "door" / "a" / "b" / "new.txt"
    )
    door = await fs.resolve("door")
    await assert_refused(tree, lambda: fs.list_dir(door), denied("read", tree / "root" / "door"))
    await assert_refused(
        tree, lambda: fs.list_dir_first(door, 5), denied("read", tree / "root" / "door")
    )


async def test_a_dangling_symlink_pointing_outside_cannot_create_its_target(tree: Path) -> None:
    (tree / "root" / "trap.txt").symlink_to(tree / "outside" / "planted.txt")
    fs = sandbox(tree)
    target = await fs.resolve("trap.txt")
    shown = tree / "root" / "trap.txt"
    await assert_refused(tree, lambda: fs.write_text(target, "x"), denied("write", shown))
    await assert_refused(
        tree, lambda: fs.write_text(target, "x", CreateIfAbsent()), denied("write", shown)
    )
    assert not (tree / "outside" / "planted.txt").exists()


async def test_symlinks_that_stay_inside_are_followed(tree: Path) -> None:
    (tree / "root" / "alias.txt").symlink_to("sub/deep.txt")
    (tree / "root" / "subalias").symlink_to("sub", target_is_directory=True)
    fs = sandbox(tree)
    alias = await fs.resolve("alias.txt")
    assert alias.target_key == (await fs.resolve("sub/deep.txt")).target_key
    assert await fs.read_text(alias) == "deep\n"
    await fs.write_text(await fs.resolve("subalias/made.txt"), "made\n")
    assert (tree / "root" / "sub" / "made.txt").read_text(encoding="utf-8") == "made\n"


async def test_a_symlink_outside_pointing_into_the_root_is_inside(tree: Path) -> None:
    (tree / "outside" / "portal").symlink_to(tree / "root", target_is_directory=True)
    fs = sandbox(tree)
    target = await fs.resolve(str(tree / "outside" / "portal" / "inside.txt"))
    assert await fs.read_text(target) == "inside\n"


async def test_lstat_of_an_inside_link_to_the_outside_shows_the_link_not_the_target(
    tree: Path,
) -> None:
    (tree / "root" / "link.txt").symlink_to(tree / "outside" / "secret.txt")
    fs = sandbox(tree)
    info = await fs.lstat("link.txt")
    assert info is not None
    assert info.type is FsFileType.SYMLINK
    assert info.link_target == str(tree / "outside" / "secret.txt")
    entries = await fs.list_dir(await fs.resolve("."))
    assert [(e.name, e.type) for e in entries if e.name == "link.txt"] == [
        ("link.txt", FsFileType.SYMLINK)
    ]


async def test_lstat_outside_is_refused(tree: Path) -> None:
    (tree / "root" / "door").symlink_to(tree / "outside", target_is_directory=True)
    fs = sandbox(tree)
    for path, shown in [
        ("../outside/secret.txt", tree / "outside" / "secret.txt"),
        ("door/secret.txt", tree / "root" / "door" / "secret.txt"),
        ("..", tree),
    ]:
        await assert_refused(tree, lambda p=path: fs.lstat(p), denied("read", shown))  # type: ignore[misc]


# --- a target checked at every primitive, and again right before publication ------------------


async def test_a_file_swapped_for_an_outside_link_after_resolve_is_refused(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve("inside.txt")
    (tree / "root" / "inside.txt").unlink()
    (tree / "root" / "inside.txt").symlink_to(tree / "outside" / "secret.txt")
    shown = tree / "root" / "inside.txt"
    await assert_refused(tree, lambda: fs.read_text(target), denied("read", shown))
    await assert_refused(tree, lambda: fs.stat(target), denied("read", shown))


async def test_a_parent_swapped_for_an_outside_link_after_resolve_is_refused(tree: Path) -> None:
    fs = sandbox(tree)
    target = await fs.resolve("sub/deep.txt")
    created = await fs.resolve("sub/new.txt")
    (tree / "root" / "sub").rename(tree / "root" / "sub.orig")
    (tree / "outside" / "deep.txt").write_text("outside deep\n", encoding="utf-8")
    (tree / "root" / "sub").symlink_to(tree / "outside", target_is_directory=True)
    edit = FsEditRequest(old_string="deep", new_string="pwned")
    await assert_refused(
        tree, lambda: fs.edit_text(target, edit), denied("edit", target.display_path)
    )
    await assert_refused(
        tree, lambda: fs.write_text(created, "x"), denied("write", created.display_path)
    )


async def test_a_forged_target_outside_is_refused_by_every_primitive(tree: Path) -> None:
    fs = sandbox(tree)
    secret = str(tree / "outside" / "secret.txt")
    forged = FsTarget(target_key=FsTargetKey(secret), display_path="inside.txt")
    inside = await fs.resolve("inside.txt")
    message = denied("read", "inside.txt")
    await assert_refused(tree, lambda: fs.read_text(forged), message)
    await assert_refused(tree, lambda: fs.write_text(forged, "x"), denied("write", "inside.txt"))
    await assert_refused(tree, lambda: fs.process_path(forged), denied("access", "inside.txt"))
    await assert_refused(tree, lambda: fs.file_url(forged), denied("access", "inside.txt"))
    await assert_refused(tree, lambda: fs.contains(inside, forged), denied("access", "inside.txt"))

    async def stream() -> None:
        async with fs.stream_text(forged) as chunks:
            async for _ in chunks:
                pass

    await assert_refused(tree, stream, message)


SwapMoment = Literal["before-lock", "after-lock"]


class _Swapper:
    """Swaps `victim` for a symlink to `elsewhere`, once, at the chosen moment of a mutation:
    right before the critical section opens and locks the parent directory ("before-lock"),
    or inside it, at the guards' last look before the rename ("after-lock")."""

    def __init__(self, victim: Path, elsewhere: Path, when: SwapMoment) -> None:
        self.victim, self.elsewhere, self.when = victim, elsewhere, when
        self.swapped = False

    def at(self, moment: SwapMoment) -> None:
        if moment == self.when and not self.swapped:
            self.swapped = True
            self.victim.rename(self.victim.with_name(self.victim.name + ".orig"))
            self.victim.symlink_to(self.elsewhere, target_is_directory=True)


class _SwapAtPublication(LocalGuards):
    """`guards`, plus the swap right before they look at the publication."""

    def __init__(self, swapper: _Swapper, guards: LocalGuards) -> None:
        self.swapper, self.guards = swapper, guards

    def check_open(self, verb: Any, display: str, opened: str) -> None:
        self.guards.check_open(verb, display, opened)

    def may_reveal(self, opened: str) -> bool:
        return self.guards.may_reveal(opened)

    def check_directory(self, verb: Any, display: str, directory: str) -> None:
        self.guards.check_directory(verb, display, directory)

    def check_publish(self, verb: Any, display: str, directory: str) -> None:
        self.swapper.at("after-lock")
        self.guards.check_publish(verb, display, directory)

    def check_delete(self, display: str, directory: str) -> None:
        self.swapper.at("after-lock")
        self.guards.check_delete(display, directory)


class _SwappingLocal(LocalFileSystem):
    """A local provider whose mutations swap at the swapper's moment."""

    def __init__(self, base: Path | str, swapper: _Swapper, guards: LocalGuards = UNGUARDED):
        super().__init__(base, guards=_SwapAtPublication(swapper, guards))
        self.swapper = swapper

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        self.swapper.at("before-lock")
        return await super().write_text(target, content, expected, capture=capture)

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        self.swapper.at("before-lock")
        return await super().edit_text(target, edit, expected, capture=capture)


class _InstrumentedSandbox(SandboxFileSystem):
    """A sandbox whose inner local provider is built by `make` (with the fence as guards)."""

    def __init__(
        self, root: Path, make: Callable[[str, LocalGuards], LocalFileSystem], **options: Any
    ) -> None:
        self._make = make
        super().__init__([root], **options)

    def _fenced_provider(
        self, base: str, guards: LocalGuards, timestamp_granularity_ns: int
    ) -> LocalFileSystem:
        return self._make(base, guards)


def restore(victim: Path) -> None:
    victim.unlink()
    victim.with_name(victim.name + ".orig").rename(victim)


@pytest.mark.parametrize("guard", [None, CreateIfAbsent()], ids=["replace", "create"])
async def test_a_parent_swapped_before_the_lock_is_caught_at_publication(
    tree: Path, guard: WriteGuard | None
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    # Control: without the fence the swap really redirects the write outside.
    bare = _SwappingLocal(tree / "root", _Swapper(victim, elsewhere, "before-lock"))
    await bare.write_text(await bare.resolve("sub/new.txt"), "escaped\n", guard)
    assert (elsewhere / "new.txt").read_text(encoding="utf-8") == "escaped\n"
    (elsewhere / "new.txt").unlink()
    restore(victim)

    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
    target = await fs.resolve("sub/new.txt")
    outside_before = snapshot(elsewhere)
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "escaped\n", guard)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("write", tree / "root" / "sub" / "new.txt")
    # Nothing published outside, no staging residue left there, nothing created inside.
    assert snapshot(elsewhere) == outside_before
    assert sorted(os.listdir(tree / "root" / "sub.orig")) == ["deep.txt"]


async def test_a_parent_swapped_before_the_lock_is_caught_for_an_edit(tree: Path) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    (elsewhere / "deep.txt").write_text("deep\n", encoding="utf-8")
    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
    target = await fs.resolve("sub/deep.txt")
    outside_before = snapshot(elsewhere)
    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, FsEditRequest(old_string="deep", new_string="pwned"))
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("edit", tree / "root" / "sub" / "deep.txt")
    assert snapshot(elsewhere) == outside_before
    assert not any(name.startswith(STAGE_PREFIX) for name in os.listdir(elsewhere))
    assert (tree / "root" / "sub.orig" / "deep.txt").read_text(encoding="utf-8") == "deep\n"


@pytest.mark.parametrize("fenced", [False, True], ids=["bare", "sandbox"])
@pytest.mark.parametrize("guard", [None, CreateIfAbsent()], ids=["replace", "create"])
async def test_a_parent_swapped_after_the_lock_cannot_redirect_the_publication(
    tree: Path, guard: WriteGuard | None, fenced: bool
) -> None:
    # The mutation works through the locked directory's descriptor: a path swapped after
    # it was opened changes nothing, with or without the fence.
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    swapper = _Swapper(victim, elsewhere, "after-lock")
    fs: LocalFileSystem | SandboxFileSystem = (
        _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
        if fenced
        else _SwappingLocal(tree / "root", swapper)
    )
    outside_before = snapshot(elsewhere)
    await fs.write_text(await fs.resolve("sub/new.txt"), "stays inside\n", guard)
    assert swapper.swapped
    assert snapshot(elsewhere) == outside_before
    landed = tree / "root" / "sub.orig"
    assert (landed / "new.txt").read_text(encoding="utf-8") == "stays inside\n"
    assert sorted(os.listdir(landed)) == ["deep.txt", "new.txt"]


async def test_a_parent_swapped_after_the_lock_cannot_redirect_a_delete(tree: Path) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    (elsewhere / "deep.txt").write_text("outside twin\n", encoding="utf-8")
    swapper = _Swapper(victim, elsewhere, "after-lock")
    fs = _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingLocal(base, swapper, g))
    target = await fs.resolve("sub/deep.txt")
    info = await fs.stat(target)
    assert info is not None
    await fs.delete(target, info.version)
    assert swapper.swapped
    assert (elsewhere / "deep.txt").read_text(encoding="utf-8") == "outside twin\n"
    assert os.listdir(tree / "root" / "sub.orig") == []


async def test_a_delete_outside_is_refused_at_the_directory_even_with_reads_unconfined(
    tree: Path,
) -> None:
    fs = SandboxFileSystem([tree / "root"], confine_reads=False)
    shown = tree / "outside" / "secret.txt"
    target = await fs.inner.resolve(str(shown))
    await assert_refused(tree, lambda: fs.inner.delete(target), denied("delete", shown))
    await assert_refused(tree, lambda: fs.delete(target), denied("delete", shown))


async def test_the_sandboxs_inner_provider_is_fenced_too(tree: Path) -> None:
    # The fence is the inner provider's guards, not a check around the sandbox's own calls:
    # reaching the inner provider directly does not get around it.
    fs = sandbox(tree)
    target = await fs.inner.resolve(str(tree / "outside" / "free.txt"))
    with pytest.raises(FsError) as caught:
        await fs.inner.write_text(target, "unfenced\n")
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert not (tree / "outside" / "free.txt").exists()
    with pytest.raises(FsError) as read:
        await fs.inner.read_text(await fs.inner.resolve(str(tree / "outside" / "secret.txt")))
    assert read.value.code is FsErrorCode.SANDBOX_DENIED
    # A plain local provider has no fence.
    free = LocalFileSystem(tree / "root")
    await free.write_text(await free.resolve(str(tree / "outside" / "free.txt")), "free\n")
    assert (tree / "outside" / "free.txt").read_text(encoding="utf-8") == "free\n"


# --- hard links ------------------------------------------------------------------------------


async def test_writing_through_a_hard_link_breaks_it_and_leaves_the_outside_file_unchanged(
    tree: Path,
) -> None:
    secret = tree / "outside" / "secret.txt"
    os.link(secret, tree / "root" / "hard.txt")
    fs = sandbox(tree)
    target = await fs.resolve("hard.txt")
    # Inside by path: a hard link is a name in the root, so its content is readable.
    assert await fs.read_text(target) == "secret\n"
    info = await fs.stat(target)
    assert info is not None
    outcome = await fs.write_text(target, "replaced\n")
    assert outcome.before == "secret\n"
    assert (tree / "root" / "hard.txt").read_text(encoding="utf-8") == "replaced\n"
    assert secret.read_text(encoding="utf-8") == "secret\n"
    assert secret.stat().st_nlink == 1
    assert (tree / "root" / "hard.txt").stat().st_ino != secret.stat().st_ino


async def test_editing_through_a_hard_link_leaves_the_outside_file_unchanged(tree: Path) -> None:
    secret = tree / "outside" / "secret.txt"
    os.link(secret, tree / "root" / "hard.txt")
    fs = sandbox(tree)
    target = await fs.resolve("hard.txt")
    await fs.edit_text(target, FsEditRequest(old_string="secret", new_string="edited"))
    assert (tree / "root" / "hard.txt").read_text(encoding="utf-8") == "edited\n"
    assert secret.read_text(encoding="utf-8") == "secret\n"
    assert secret.stat().st_nlink == 1


# --- modes -----------------------------------------------------------------------------------


async def test_read_only_refuses_writes_and_edits_but_allows_reads(tree: Path) -> None:
    fs = sandbox(tree, "read-only")
    target = await fs.resolve("inside.txt")
    new = await fs.resolve("sub/new.txt")
    shown = tree / "root" / "inside.txt"
    assert await fs.read_text(target) == "inside\n"
    assert await fs.stat(target) is not None
    assert [e.name for e in await fs.list_dir(await fs.resolve("sub"))] == ["deep.txt"]
    await assert_refused(tree, lambda: fs.write_text(target, "x"), read_only("write", shown))
    await assert_refused(
        tree,
        lambda: fs.write_text(new, "x", CreateIfAbsent()),
        read_only("write", tree / "root" / "sub" / "new.txt"),
    )
    await assert_refused(
        tree,
        lambda: fs.edit_text(target, FsEditRequest(old_string="inside", new_string="x")),
        read_only("edit", shown),
    )
    await assert_refused(tree, lambda: fs.delete(target), read_only("delete", shown))
    await assert_refused(tree, lambda: fs.inner.delete(target), read_only("delete", shown))


async def test_read_only_still_confines_reads(tree: Path) -> None:
    fs = sandbox(tree, "read-only")
    target = await fs.resolve("../outside/secret.txt")
    await assert_refused(
        tree,
        lambda: fs.read_text(target),
        denied("read", tree / "outside" / "secret.txt", "read-only"),
    )


async def test_workspace_write_with_unconfined_reads_reads_outside_but_never_writes(
    tree: Path,
) -> None:
    fs = sandbox(tree, confine_reads=False)
    target = await fs.resolve("../outside/secret.txt")
    shown = tree / "outside" / "secret.txt"
    assert await fs.read_text(target) == "secret\n"
    assert [e.name for e in await fs.list_dir(await fs.resolve("../outside"))] == ["secret.txt"]
    await assert_refused(tree, lambda: fs.write_text(target, "x"), denied("write", shown))
    await assert_refused(
        tree,
        lambda: fs.edit_text(target, FsEditRequest(old_string="secret", new_string="x")),
        denied("edit", shown),
    )


async def test_full_access_writes_outside(tree: Path) -> None:
    fs = sandbox(tree, "full-access", confine_reads=False)
    target = await fs.resolve("../outside/secret.txt")
    outcome = await fs.write_text(target, "overwritten\n")
    assert outcome.before == "secret\n"
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == "overwritten\n"
    await fs.edit_text(target, FsEditRequest(old_string="overwritten", new_string="edited"))
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == "edited\n"
    created = await fs.resolve("../outside/new/dir/file.txt")
    await fs.write_text(created, "new\n", CreateIfAbsent())
    assert (tree / "outside" / "new" / "dir" / "file.txt").read_text(encoding="utf-8") == "new\n"


async def test_full_access_with_confined_reads_never_reveals_outside_content(
    tree: Path,
) -> None:
    fs = sandbox(tree, "full-access")
    target = await fs.resolve("../outside/secret.txt")
    shown = tree / "outside" / "secret.txt"
    await assert_refused(tree, lambda: fs.read_text(target), denied("read", shown, "full-access"))
    # An edit reads the file (and returns it): it needs both permissions.
    await assert_refused(
        tree,
        lambda: fs.edit_text(target, FsEditRequest(old_string="secret", new_string="x")),
        denied("edit", shown, "full-access"),
    )
    outcome: FsWriteOutcome = await fs.write_text(target, "blind\n")
    assert (outcome.operation, outcome.before) == ("update", None)
    assert shown.read_text(encoding="utf-8") == "blind\n"


async def test_every_root_is_inside_and_the_first_is_the_base(tree: Path) -> None:
    fs = SandboxFileSystem([tree / "root", tree / "outside"])
    assert (await fs.resolve("inside.txt")).display_path == str(tree / "root" / "inside.txt")
    second = await fs.resolve(str(tree / "outside" / "secret.txt"))
    await fs.write_text(second, "allowed\n")
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == "allowed\n"
    evil = await fs.resolve("../root-evil/evil.txt")
    await assert_refused(
        tree, lambda: fs.read_text(evil), denied("read", tree / "root-evil" / "evil.txt")
    )


# --- the other primitives --------------------------------------------------------------------


async def test_path_primitives_inside_delegate_to_the_local_provider(tree: Path) -> None:
    fs = sandbox(tree)
    root, deep = await fs.resolve("."), await fs.resolve("sub/deep.txt")
    assert await fs.process_path(deep) == str((tree / "root" / "sub" / "deep.txt").resolve())
    assert (await fs.file_url(deep)).startswith("file:///")
    assert await fs.contains(root, deep)
    assert not await fs.contains(deep, root)
    assert fs.capabilities == LocalFileSystem.capabilities


async def test_containment_never_uses_string_prefixes(tree: Path) -> None:
    fs = SandboxFileSystem([tree / "root", tree / "root-evil"])
    root, evil = await fs.resolve("."), await fs.resolve("../root-evil/evil.txt")
    assert not await fs.contains(root, evil)


class _SwapBeforeOpen(LocalFileSystem):
    """Swaps `victim` for a symlink to `elsewhere` after the sandbox checked the path and
    right before the inner provider opens it (the read window of a path-based check)."""

    def __init__(
        self, base: Path | str, victim: Path, elsewhere: Path, guards: LocalGuards = UNGUARDED
    ) -> None:
        super().__init__(base, guards=guards)
        self.victim, self.elsewhere = victim, elsewhere

    def _swap(self) -> None:
        self.victim.rename(self.victim.with_name(self.victim.name + ".orig"))
        self.victim.symlink_to(self.elsewhere)

    async def read_text(self, target: FsTarget) -> str:
        self._swap()
        return await super().read_text(target)

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        self._swap()
        return await super().read_bytes(target, max_bytes)

    async def read_small(self, target: FsTarget, max_bytes: int) -> FsSmallRead | None:
        self._swap()
        return await super().read_small(target, max_bytes)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        self._swap()
        return super().stream_text(target)


@pytest.mark.parametrize("primitive", ["read_text", "read_bytes", "stream_text", "read_small"])
async def test_a_file_swapped_for_an_outside_link_right_before_the_open_is_not_read(
    tree: Path, primitive: str
) -> None:
    victim, secret = tree / "root" / "inside.txt", tree / "outside" / "secret.txt"
    secret.write_text("secret\n", encoding="utf-8")

    async def read(fs: LocalFileSystem | SandboxFileSystem) -> object:
        target = await fs.resolve("inside.txt")
        if primitive == "read_text":
            return await fs.read_text(target)
        if primitive == "stream_text":
            async with fs.stream_text(target) as chunks:
                return "".join([chunk async for chunk in chunks])
        if primitive == "read_small":
            small = await fs.read_small(target, 1024)
            return None if small is None or small.decoded is None else small.decoded.text
        return await fs.read_bytes(target, 1024)

    # Control: without the fence the swap really leaks the outside file.
    bare = _SwapBeforeOpen(tree / "root", victim, secret)
    assert await read(bare) in ("secret\n", b"secret\n")
    restore(victim)

    fs = _InstrumentedSandbox(
        tree / "root", lambda base, guards: _SwapBeforeOpen(base, victim, secret, guards)
    )
    with pytest.raises(FsError) as caught:
        await read(fs)
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert caught.value.message == denied("read", tree / "root" / "inside.txt")
