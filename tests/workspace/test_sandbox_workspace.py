"""`Workspace.sandbox`: the tools through `Session.call` on a fenced folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import WrapperFileSystem
from dsh_fs.providers import SandboxFileSystem

pytestmark = pytest.mark.anyio

REMEDY = " — use a path inside the workspace, or ask the user for access"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    (top / "root").mkdir()
    (top / "root" / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (top / "outside").mkdir()
    (top / "outside" / "secret.txt").write_text("secret\n", encoding="utf-8")
    return top


def listing(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*"))


async def test_a_sandbox_workspace_reads_writes_and_edits_inside_its_root(tree: Path) -> None:
    async with Workspace.sandbox(tree / "root") as workspace:
        assert isinstance(workspace.fs, WrapperFileSystem)
        fenced = workspace.fs.wrapped  # the change sets' intent records fenced out
        assert isinstance(fenced, WrapperFileSystem)
        assert isinstance(fenced.wrapped, SandboxFileSystem)
        assert workspace.cwd == str(tree / "root")
        session = workspace.session()
        read = await session.call("read", {"file_path": "notes.txt"})
        assert not read.is_error, read.text
        edit = await session.call(
            "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}
        )
        assert not edit.is_error, edit.text
        write = await session.call("write", {"file_path": "sub/new.txt", "content": "new\n"})
        assert not write.is_error, write.text
    assert (tree / "root" / "notes.txt").read_text(encoding="utf-8") == "alpha\ngamma\n"
    assert (tree / "root" / "sub" / "new.txt").read_text(encoding="utf-8") == "new\n"


@pytest.mark.parametrize("spelled", ["../outside/new.txt", "{top}/outside/new.txt"])
async def test_a_write_outside_is_refused_with_the_marker_and_the_remedy(
    tree: Path, spelled: str
) -> None:
    before = listing(tree)
    async with Workspace.sandbox(tree / "root") as workspace:
        result = await workspace.session().call(
            "write", {"file_path": spelled.format(top=tree), "content": "x"}
        )
    shown = tree / "outside" / "new.txt"
    assert result.is_error
    assert result.code == "FS_SANDBOX_DENIED"
    assert result.text == (
        f'Error: cannot write "{shown}": outside the sandbox '
        f"[sandbox: file access denied under workspace-write mode]{REMEDY}"
    )
    assert listing(tree) == before


async def test_a_read_through_a_symlink_to_the_outside_is_refused(tree: Path) -> None:
    (tree / "root" / "link.txt").symlink_to(tree / "outside" / "secret.txt")
    async with Workspace.sandbox(tree / "root") as workspace:
        result = await workspace.session().call("read", {"file_path": "link.txt"})
    assert result.code == "FS_SANDBOX_DENIED"
    assert result.text == (
        f'Error: cannot read "{tree / "root" / "link.txt"}": outside the sandbox '
        f"[sandbox: file access denied under workspace-write mode]{REMEDY}"
    )
    assert "secret" not in result.text.replace("secret.txt", "")


async def test_a_read_only_sandbox_workspace_reads_but_refuses_edits(tree: Path) -> None:
    async with Workspace.sandbox(tree / "root", mode="read-only") as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": "notes.txt"})
        assert not read.is_error, read.text
        edit = await session.call(
            "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}
        )
        write = await session.call("write", {"file_path": "notes.txt", "content": "x"})
    shown = tree / "root" / "notes.txt"
    marker = "the sandbox is read-only [sandbox: file access denied under read-only mode]"
    assert (edit.code, edit.text) == (
        "FS_SANDBOX_DENIED",
        f'Error: cannot edit "{shown}": {marker}{REMEDY}',
    )
    assert (write.code, write.text) == (
        "FS_SANDBOX_DENIED",
        f'Error: cannot write "{shown}": {marker}{REMEDY}',
    )
    assert shown.read_text(encoding="utf-8") == "alpha\nbeta\n"


async def test_more_roots_are_inside_and_the_first_is_the_base(tree: Path) -> None:
    async with Workspace.sandbox(tree / "root", tree / "outside", policy=False) as workspace:
        result = await workspace.session().call(
            "write", {"file_path": "../outside/extra.txt", "content": "ok\n"}
        )
        assert not result.is_error, result.text
    assert (tree / "outside" / "extra.txt").read_text(encoding="utf-8") == "ok\n"


async def test_full_access_with_unconfined_reads_reaches_outside(tree: Path) -> None:
    async with Workspace.sandbox(
        tree / "root", mode="full-access", confine_reads=False
    ) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": "../outside/secret.txt"})
        assert not read.is_error, read.text
        write = await session.call(
            "write", {"file_path": "../outside/secret.txt", "content": "changed\n"}
        )
        assert not write.is_error, write.text
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == "changed\n"


def test_a_missing_root_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Workspace.sandbox(os.fspath(tmp_path / "missing"))
