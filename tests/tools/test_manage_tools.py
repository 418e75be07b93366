"""`move`, `delete` and `mkdir` through a workspace (SPEC §10): the policy, the rendered
texts, the bad inputs that change nothing, and the MCP annotations."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.mcp._definitions import tool_definitions

pytestmark = pytest.mark.anyio


def _is_dir(path: Path) -> bool:
    return path.is_dir()


def _other_filesystem(root: Path, name: str) -> Path:
    """A fresh directory on /dev/shm (tmpfs), when that is another filesystem than `root`'s."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(root).st_dev:
        pytest.skip("needs /dev/shm on another filesystem")
    return Path(os.path.realpath(shm)) / f"dsh-fs-test-{os.getpid()}-{name}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return (tmp_path / "root").resolve()


async def test_a_file_moves_only_once_read_and_the_mover_may_then_edit_it(root: Path) -> None:
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        args = {"source_path": "a.txt", "destination_path": "docs/b.txt"}
        refused = await session.call("move", args)
        assert (refused.code, refused.text) == (
            "FS_NOT_OBSERVED",
            f'Error: move requires reading "{root}/a.txt" first — read the file, then retry',
        )
        assert (root / "a.txt").exists()
        await session.call("read", {"file_path": "a.txt"})
        moved = await session.call("move", args)
        assert moved.text == f"Moved {root}/a.txt to {root}/docs/b.txt"
        assert moved.value == {
            "source": f"{root}/a.txt",
            "destination": f"{root}/docs/b.txt",
            "type": "file",
            "replaced": False,
        }
        edit = {"file_path": "docs/b.txt", "old_string": "one", "new_string": "two"}
        assert not (await session.call("edit", edit)).is_error
        gone = await session.call("edit", {**edit, "file_path": "a.txt"})
        assert gone.code == "FS_NOT_FOUND"
    assert (root / "docs" / "b.txt").read_text(encoding="utf-8") == "two\n"


async def test_a_move_never_clobbers_an_unread_destination_and_replaces_a_read_one(
    root: Path,
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    (root / "b.txt").write_text("b\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        await session.call("read", {"file_path": "a.txt"})
        args = {"source_path": "a.txt", "destination_path": "b.txt"}
        refused = await session.call("move", args)
        assert (refused.code, refused.text) == (
            "FS_ALREADY_EXISTS",
            f'Error: cannot move "{root}/a.txt" to "{root}/b.txt": destination exists; '
            "read it first to replace it",
        )
        assert (root / "b.txt").read_text(encoding="utf-8") == "b\n"
        await session.call("read", {"file_path": "b.txt"})
        (root / "b.txt").write_text("b changed\n", encoding="utf-8")
        stale = await session.call("move", args)
        assert stale.code == "FS_STALE_VERSION"
        assert stale.text.endswith("— re-read the file, then retry")
        await session.call("read", {"file_path": "b.txt"})
        replaced = await session.call("move", args)
        assert replaced.value is not None
        assert replaced.value["replaced"] is True
    assert not (root / "a.txt").exists()
    assert (root / "b.txt").read_text(encoding="utf-8") == "a\n"


async def test_a_move_of_a_read_file_someone_else_deleted_is_stale_with_the_remedy_as_delete(
    root: Path,
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    (root / "b.txt").write_text("b\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        await session.call("read", {"file_path": "a.txt"})
        await session.call("read", {"file_path": "b.txt"})
        (root / "a.txt").unlink()
        (root / "b.txt").unlink()
        moved = await session.call("move", {"source_path": "a.txt", "destination_path": "c.txt"})
        deleted = await session.call("delete", {"file_path": "b.txt"})
        never_read = await session.call(
            "move", {"source_path": "never.txt", "destination_path": "c.txt"}
        )
    assert (moved.code, moved.text) == (
        "FS_STALE_VERSION",
        f'Error: cannot move "{root}/a.txt": file no longer exists — re-read the file, then retry',
    )
    assert deleted.code == "FS_STALE_VERSION"
    assert deleted.text.endswith("file no longer exists — re-read the file, then retry")
    assert never_read.code == "FS_NOT_FOUND"
    assert not (root / "c.txt").exists()


async def test_a_directory_moves_and_is_deleted_empty_without_a_read(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "m.py").write_text("x\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        moved = await session.call("move", {"source_path": "pkg", "destination_path": "lib"})
        assert moved.text == f"Moved {root}/pkg to {root}/lib"
        full = await session.call("delete", {"file_path": "lib"})
        assert (full.code, full.text) == (
            "FS_NOT_EMPTY",
            f'Error: cannot delete "{root}/lib": directory not empty',
        )
        await session.call("read", {"file_path": "lib/m.py"})
        assert (await session.call("delete", {"file_path": "lib/m.py"})).text == (
            f"Deleted {root}/lib/m.py"
        )
        done = await session.call("delete", {"file_path": "lib"})
        assert (done.text, done.value) == (
            f"Deleted {root}/lib",
            {"path": f"{root}/lib", "type": "directory"},
        )
    assert os.listdir(root) == []


async def test_a_delete_of_an_unread_file_is_refused_and_keeps_it(root: Path) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        refused = await ws.session().call("delete", {"file_path": "a.txt"})
    assert (refused.code, refused.text) == (
        "FS_NOT_OBSERVED",
        f'Error: delete requires reading "{root}/a.txt" first — read the file, then retry',
    )
    assert (root / "a.txt").exists()


async def test_a_link_to_outside_the_fence_is_deleted_as_a_link_without_a_read(
    root: Path,
) -> None:
    secret = root.parent / "secret.txt"
    secret.write_text("keep\n", encoding="utf-8")
    (root / "link").symlink_to(secret)
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        assert (await session.call("read", {"file_path": "link"})).code == "FS_SANDBOX_DENIED"
        done = await session.call("delete", {"file_path": "link"})
        assert (done.text, done.value) == (
            f"Deleted {root}/link",
            {"path": f"{root}/link", "type": "symlink"},
        )
    assert not (root / "link").is_symlink()
    assert secret.read_text(encoding="utf-8") == "keep\n"


async def test_mkdir_creates_reports_an_existing_directory_and_refuses_a_file_in_the_way(
    root: Path,
) -> None:
    (root / "f.txt").write_text("x\n", encoding="utf-8")
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        made = await session.call("mkdir", {"path": "a/b"})
        again = await session.call("mkdir", {"path": "a/b"})
        over = await session.call("mkdir", {"path": "f.txt"})
        below = await session.call("mkdir", {"path": "f.txt/sub"})
    assert (made.text, made.value) == (
        f"Created directory {root}/a/b",
        {"path": f"{root}/a/b", "created": True},
    )
    assert again.text == f"Directory {root}/a/b already exists"
    assert (over.code, over.text) == (
        "FS_NOT_DIRECTORY",
        f'Error: cannot create directory "{root}/f.txt": a file is in the way',
    )
    assert (below.code, below.text) == (
        "FS_NOT_DIRECTORY",
        f'Error: cannot create directory "{root}/f.txt/sub": a file is in the way',
    )
    assert (root / "a" / "b").is_dir()


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("move", {"source_path": "a.txt", "destination_path": "a.txt"}, "FS_ALREADY_EXISTS"),
        ("move", {"source_path": "d", "destination_path": "d/e/d"}, "FS_PERMISSION_DENIED"),
        ("move", {"source_path": ".", "destination_path": "elsewhere"}, "FS_NOT_FOUND"),
        ("move", {"source_path": "/", "destination_path": "x"}, "FS_SANDBOX_DENIED"),
        ("move", {"source_path": "a.txt", "destination_path": "../out.txt"}, "FS_SANDBOX_DENIED"),
        ("move", {"source_path": "pipe", "destination_path": "pipe2"}, "FS_NOT_REGULAR_FILE"),
        ("move", {"source_path": "missing", "destination_path": "x"}, "FS_NOT_FOUND"),
        ("delete", {"file_path": "."}, "FS_NOT_FOUND"),
        ("delete", {"file_path": "d/.."}, "FS_NOT_FOUND"),
        ("delete", {"file_path": ".."}, "FS_NOT_FOUND"),
        ("delete", {"file_path": "/"}, "FS_SANDBOX_DENIED"),
        ("delete", {"file_path": " "}, "INVALID_ARGS"),
        # Said "delete requires reading it first", and every read fails the same way.
        ("delete", {"file_path": "pipe"}, "FS_NOT_REGULAR_FILE"),
        ("mkdir", {"path": "../out"}, "FS_SANDBOX_DENIED"),
        ("move", {"source_path": "a.txt"}, "INVALID_ARGS"),
    ],
)
async def test_bad_input_is_a_structured_error_that_changes_nothing(
    root: Path, tool: str, args: dict[str, str], code: str
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    (root / "d").mkdir()
    os.mkfifo(root / "pipe")
    before = sorted(str(p) for p in root.parent.rglob("*"))
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        await session.call("read", {"file_path": "a.txt"})
        result = await session.call(tool, args)
    assert (result.is_error, result.code) == (True, code), result.text
    assert sorted(str(p) for p in root.parent.rglob("*")) == before


async def test_the_root_itself_is_never_moved_or_deleted(root: Path) -> None:
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        move = await session.call("move", {"source_path": str(root), "destination_path": "x"})
        delete = await session.call("delete", {"file_path": str(root)})
    assert (move.code, delete.code) == ("FS_SANDBOX_DENIED", "FS_SANDBOX_DENIED")
    assert delete.text.startswith(f'Error: cannot delete "{root}": it is a sandbox root')
    assert _is_dir(root)


async def test_a_move_without_renameat2_links_then_unlinks_and_still_never_replaces(
    root: Path, portable: None
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    (root / "b.txt").write_text("b\n", encoding="utf-8")
    (root / "d").mkdir()
    async with Workspace.sandbox(root) as ws:
        session = ws.session()
        await session.call("read", {"file_path": "a.txt"})
        clash = await session.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        moved = await session.call("move", {"source_path": "a.txt", "destination_path": "c.txt"})
        folder = await session.call("move", {"source_path": "d", "destination_path": "e"})
    assert clash.code == "FS_ALREADY_EXISTS"
    assert not moved.is_error
    assert not folder.is_error
    assert sorted(os.listdir(root)) == ["b.txt", "c.txt", "e"]
    assert (root / "b.txt").read_text(encoding="utf-8") == "b\n"


async def test_a_move_across_filesystems_is_a_verified_copy_then_a_removal(
    root: Path, tmp_path: Path
) -> None:
    other = _other_filesystem(root, tmp_path.name)
    other.mkdir()
    try:
        (root / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
        (root / "run.sh").chmod(0o750)
        async with Workspace.sandbox(root, other) as ws:
            session = ws.session()
            await session.call("read", {"file_path": "run.sh"})
            dst = str(other / "bin" / "run.sh")
            moved = await session.call("move", {"source_path": "run.sh", "destination_path": dst})
            assert moved.text == f"Moved {root}/run.sh to {dst}"
            (root / "d").mkdir()
            folder = await session.call(
                "move", {"source_path": "d", "destination_path": dst + ".d"}
            )
            assert folder.code == "FS_IO_ERROR"
            edit = {"file_path": dst, "old_string": "hi", "new_string": "ho"}
            assert not (await session.call("edit", edit)).is_error
        assert not (root / "run.sh").exists()
        assert (other / "bin" / "run.sh").read_bytes() == b"#!/bin/sh\necho ho\n"
        assert (other / "bin" / "run.sh").stat().st_mode & 0o777 == 0o750
        assert (root / "d").is_dir()
    finally:
        for path in sorted(other.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        other.rmdir()


async def test_mcp_annotations_mark_move_and_delete_destructive_and_mkdir_idempotent(
    root: Path,
) -> None:
    async with Workspace.sandbox(root) as ws:
        definitions = {d["name"]: d["annotations"] for d in tool_definitions(ws)}
    assert definitions["move"]["destructiveHint"] is True
    assert definitions["delete"]["destructiveHint"] is True
    assert definitions["mkdir"]["idempotentHint"] is True
    assert definitions["mkdir"]["destructiveHint"] is False


async def test_the_tools_can_be_left_out(root: Path) -> None:
    async with Workspace.sandbox(root, tools=("read", "mkdir")) as ws:
        assert [s["name"] for s in ws.tool_schemas()] == ["read", "mkdir"]
        result = await ws.session().call("move", {"source_path": "a", "destination_path": "b"})
    assert result.code == "UNKNOWN_TOOL"
