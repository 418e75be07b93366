"""A parent directory swapped for a link to the outside while a move or a delete is under
way moves or deletes nothing outside: the fence looks at the kernel's path of both locked
directories right before the rename or the removal. Each test has a control showing what
the same swap does without the fence."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsCapture, FsMoveOutcome, FsTarget, FsVersion, WriteGuard
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._guards import UNGUARDED, LocalGuards

from .test_sandbox import _InstrumentedSandbox, _SwapAtPublication, _Swapper, restore, snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]


class _SwappingManager(LocalFileSystem):
    """A local provider whose moves and removals swap at the swapper's moment."""

    def __init__(self, base: Path | str, swapper: _Swapper, guards: LocalGuards = UNGUARDED):
        super().__init__(base, guards=_SwapAtPublication(swapper, guards))
        self.swapper = swapper

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        self.swapper.at("before-lock")
        return await super().move(source, destination, expected, replace, capture=capture)

    async def delete_dir(self, target: FsTarget) -> None:
        self.swapper.at("before-lock")
        await super().delete_dir(target)

    async def delete_link(self, target: FsTarget) -> None:
        self.swapper.at("before-lock")
        await super().delete_link(target)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/sub/deep.txt``, ``root/a.txt`` (the sandbox) and ``outside/deep.txt``."""
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "deep.txt").write_text("inside\n", encoding="utf-8")
    (tmp_path / "root" / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "deep.txt").write_text("outside\n", encoding="utf-8")
    return tmp_path


def fenced(tree: Path, swapper: _Swapper) -> _InstrumentedSandbox:
    return _InstrumentedSandbox(tree / "root", lambda base, g: _SwappingManager(base, swapper, g))


@pytest.mark.parametrize("when", ["before-lock"])
async def test_a_source_parent_swapped_for_an_outside_link_moves_nothing_out(
    tree: Path, when: str
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    # Control: without the fence, the swap makes the move take the outside file.
    bare = _SwappingManager(tree / "root", _Swapper(victim, elsewhere, when))  # type: ignore[arg-type]
    await bare.move(await bare.resolve("sub/deep.txt"), await bare.resolve("taken.txt"))
    assert (tree / "root" / "taken.txt").read_text(encoding="utf-8") == "outside\n"
    (tree / "root" / "taken.txt").rename(elsewhere / "deep.txt")
    restore(victim)

    swapper = _Swapper(victim, elsewhere, when)  # type: ignore[arg-type]
    fs = fenced(tree, swapper)
    source, destination = await fs.resolve("sub/deep.txt"), await fs.resolve("taken.txt")
    outside_before = snapshot(elsewhere)
    with pytest.raises(FsError) as caught:
        await fs.move(source, destination)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert snapshot(elsewhere) == outside_before
    assert not (tree / "root" / "taken.txt").exists()


@pytest.mark.parametrize("when", ["before-lock"])
async def test_a_destination_parent_swapped_for_an_outside_link_receives_nothing_outside(
    tree: Path, when: str
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    bare = _SwappingManager(tree / "root", _Swapper(victim, elsewhere, when))  # type: ignore[arg-type]
    await bare.move(await bare.resolve("a.txt"), await bare.resolve("sub/a.txt"))
    assert (elsewhere / "a.txt").read_text(encoding="utf-8") == "a\n"
    (elsewhere / "a.txt").rename(tree / "root" / "a.txt")
    restore(victim)

    swapper = _Swapper(victim, elsewhere, when)  # type: ignore[arg-type]
    fs = fenced(tree, swapper)
    source, destination = await fs.resolve("a.txt"), await fs.resolve("sub/a.txt")
    outside_before = snapshot(elsewhere)
    with pytest.raises(FsError) as caught:
        await fs.move(source, destination)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert snapshot(elsewhere) == outside_before
    assert (tree / "root" / "a.txt").read_text(encoding="utf-8") == "a\n"


@pytest.mark.parametrize("when", ["before-lock"])
async def test_a_parent_swapped_during_a_directory_delete_deletes_nothing_outside(
    tree: Path, when: str
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    (victim / "empty").mkdir()
    (elsewhere / "empty").mkdir()
    bare = _SwappingManager(tree / "root", _Swapper(victim, elsewhere, when))  # type: ignore[arg-type]
    await bare.delete_dir(await bare.resolve("sub/empty"))
    assert not (elsewhere / "empty").exists()
    (elsewhere / "empty").mkdir()
    restore(victim)

    swapper = _Swapper(victim, elsewhere, when)  # type: ignore[arg-type]
    fs = fenced(tree, swapper)
    target = await fs.resolve("sub/empty")
    with pytest.raises(FsError) as caught:
        await fs.delete_dir(target)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert (elsewhere / "empty").is_dir()


async def test_a_parent_swapped_during_a_link_delete_deletes_no_outside_link(
    tree: Path,
) -> None:
    victim, elsewhere = tree / "root" / "sub", tree / "outside"
    (victim / "link").symlink_to("deep.txt")
    (elsewhere / "link").symlink_to("deep.txt")
    swapper = _Swapper(victim, elsewhere, "before-lock")
    fs = fenced(tree, swapper)
    target = await fs.resolve("sub/link")
    with pytest.raises(FsError) as caught:
        await fs.delete_link(target)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert (elsewhere / "link").is_symlink()


async def test_a_parent_swapped_for_a_link_outside_a_clients_roots_moves_nothing_out(
    tree: Path,
) -> None:
    # A session fenced in to a client's root (`narrowed`) has its own guards: a swap that
    # stays inside the sandbox's root but leaves the client's is caught all the same.
    client = tree / "root" / "client"
    (client / "sub").mkdir(parents=True)
    (client / "sub" / "deep.txt").write_text("inside\n", encoding="utf-8")
    elsewhere = tree / "root" / "other"
    elsewhere.mkdir()
    (elsewhere / "deep.txt").write_text("other\n", encoding="utf-8")
    swapper = _Swapper(client / "sub", elsewhere, "before-lock")
    fs = fenced(tree, swapper).narrowed([str(client)], replace=True)
    source, destination = await fs.resolve("sub/deep.txt"), await fs.resolve("taken.txt")
    before = snapshot(elsewhere)
    with pytest.raises(FsError) as caught:
        await fs.move(source, destination)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert snapshot(elsewhere) == before
    assert not (client / "taken.txt").exists()
    # Control: the sandbox's own fence (the wider root) lets the same swap through.
    restore(client / "sub")
    swapper = _Swapper(client / "sub", elsewhere, "before-lock")
    wide = fenced(tree, swapper)
    await wide.move(
        await wide.resolve("client/sub/deep.txt"), await wide.resolve("client/taken.txt")
    )
    assert swapper.swapped
    assert (client / "taken.txt").read_text(encoding="utf-8") == "other\n"


async def test_a_parent_swapped_during_a_delete_outside_a_clients_roots_deletes_nothing(
    tree: Path,
) -> None:
    client = tree / "root" / "client"
    (client / "sub" / "empty").mkdir(parents=True)
    elsewhere = tree / "root" / "other"
    (elsewhere / "empty").mkdir(parents=True)
    swapper = _Swapper(client / "sub", elsewhere, "before-lock")
    fs = fenced(tree, swapper).narrowed([str(client)], replace=True)
    target = await fs.resolve("sub/empty")
    with pytest.raises(FsError) as caught:
        await fs.delete_dir(target)
    assert swapper.swapped
    assert caught.value.code is FsErrorCode.SANDBOX_DENIED
    assert (elsewhere / "empty").is_dir()
