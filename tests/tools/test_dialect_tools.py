"""The internal `insert`, `patch` and `delete` tools: same policy as `edit`, never offered."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs import Workspace

from .conftest import WorkspaceFactory

pytestmark = pytest.mark.anyio


async def test_models_cannot_reach_the_internal_tools_by_name(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    (root / "a.txt").write_text("x\n", encoding="utf-8")
    async with make_workspace() as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        result = await session.call("delete_file", {"file_path": "a.txt"})
        assert (result.code, result.text) == ("UNKNOWN_TOOL", 'Error: unknown tool "delete_file"')
    assert (root / "a.txt").exists()


async def test_insert_needs_a_read_and_records_the_new_version(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    path = root / "a.txt"
    path.write_text("one\nthree\n", encoding="utf-8")
    async with make_workspace() as workspace:
        session = workspace.session()
        args = {"file_path": "a.txt", "insert_line": 1, "text": "two"}
        refused = await session.call("insert", args, internal=True)
        assert refused.code == "FS_NOT_OBSERVED"
        assert (
            refused.text
            == f'Error: edit requires reading "{path}" first — read the file, then retry'
        )
        await session.call("read", {"file_path": "a.txt"})
        done = await session.call("insert", args, internal=True)
        assert not done.is_error, done.text
        assert done.value is not None
        assert done.value["after"] == "one\ntwo\nthree\n"
        # Insert-then-insert needs no read in between: the new version was recorded.
        again = await session.call(
            "insert", {"file_path": "a.txt", "insert_line": 3, "text": "four"}, internal=True
        )
        assert not again.is_error, again.text
    assert path.read_text(encoding="utf-8") == "one\ntwo\nthree\nfour\n"


async def test_patch_after_an_out_of_band_change_is_stale_and_changes_nothing(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    path = root / "a.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    hunks = [{"lines": ["-a", "+A"]}, {"lines": ["-b", "+B"]}]
    async with make_workspace() as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        path.write_text("a\nb\nc\n", encoding="utf-8")
        stale = await session.call("patch", {"file_path": "a.txt", "hunks": hunks}, internal=True)
        assert stale.code == "FS_STALE_VERSION"
        assert path.read_text(encoding="utf-8") == "a\nb\nc\n"
        await session.call("read", {"file_path": "a.txt"})
        done = await session.call("patch", {"file_path": "a.txt", "hunks": hunks}, internal=True)
        assert not done.is_error, done.text
    assert path.read_text(encoding="utf-8") == "A\nB\nc\n"


async def test_a_patch_whose_second_hunk_misses_changes_nothing(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    path = root / "a.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    hunks = [{"lines": ["-a", "+A"]}, {"lines": ["-zzz", "+B"]}]
    async with make_workspace() as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        miss = await session.call("patch", {"file_path": "a.txt", "hunks": hunks}, internal=True)
        assert miss.code == "FS_EDIT_NOT_FOUND"
        assert miss.text.startswith(f'Error: hunk 2 of the patch was not found in "{path}"\n')
    assert path.read_text(encoding="utf-8") == "a\nb\n"


async def test_delete_of_a_fifo_says_what_it_is_not_to_read_it_first(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    # It said "delete requires reading ... first", and every read of a FIFO fails.
    os.mkfifo(root / "pipe")
    async with make_workspace() as workspace:
        session = workspace.session()
        refused = await session.call("delete_file", {"file_path": "pipe"}, internal=True)
        assert refused.text == f'Error: cannot delete "{root / "pipe"}": not a regular file'
        assert refused.code == "FS_NOT_REGULAR_FILE"
    assert (root / "pipe").exists()


async def test_delete_needs_a_read_then_records_the_absence(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    path = root / "a.txt"
    path.write_text("x\n", encoding="utf-8")
    async with make_workspace() as workspace:
        session = workspace.session()
        refused = await session.call("delete_file", {"file_path": "a.txt"}, internal=True)
        assert (
            refused.text
            == f'Error: delete requires reading "{path}" first — read the file, then retry'
        )
        assert path.exists()
        await session.call("read", {"file_path": "a.txt"})
        done = await session.call("delete_file", {"file_path": "a.txt"}, internal=True)
        assert (done.is_error, done.text) == (False, f"The file {path} has been deleted.")
        assert not path.exists()
        # The session saw it go: editing it is "not found", creating it needs no read.
        edit = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}
        )
        assert edit.text == f'Error: cannot edit "{path}": not found'
        created = await session.call("write", {"file_path": "a.txt", "content": "new\n"})
        assert not created.is_error


async def test_delete_of_a_file_changed_since_the_read_is_stale_and_keeps_it(
    root: Path, make_workspace: WorkspaceFactory
) -> None:
    path = root / "a.txt"
    path.write_text("x\n", encoding="utf-8")
    async with make_workspace() as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        path.write_text("theirs\n", encoding="utf-8")
        stale = await session.call("delete_file", {"file_path": "a.txt"}, internal=True)
        assert stale.text == (
            f'Error: cannot delete "{path}": file changed since it was read'
            " — re-read the file, then retry"
        )
    assert path.read_text(encoding="utf-8") == "theirs\n"


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        (
            "insert",
            {"file_path": "a.txt", "insert_line": -1, "text": "x"},
            "insert_line must be a non-negative integer",
        ),
        (
            "insert",
            {"file_path": "a.txt", "insert_line": 1.5, "text": "x"},
            "insert_line must be a non-negative integer",
        ),
        ("patch", {"file_path": "a.txt", "hunks": []}, "hunks must be a non-empty array"),
        (
            "patch",
            {"file_path": "a.txt", "hunks": [{"lines": ["x"]}]},
            'hunk 1: lines must be a non-empty array of strings starting with " ", "-" or "+"',
        ),
        (
            "patch",
            {"file_path": "a.txt", "hunks": "x"},
            'invalid arguments: "hunks" must be an array',
        ),
        ("delete_file", {"file_path": " "}, "file_path must be a non-empty string"),
    ],
)
async def test_internal_tool_argument_mistakes_are_invalid_args(
    root: Path, name: str, args: dict[str, object], message: str
) -> None:
    async with Workspace.local(root) as workspace:
        result = await workspace.session().call(name, args, internal=True)
    assert (result.code, result.text) == ("INVALID_ARGS", f"Error: {message}")
