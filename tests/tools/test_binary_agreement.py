"""Binary for every tool (docs/differences.md): once a file holds a NUL, read, edit and
edit_files all refuse it as binary (FS_NOT_TEXT) with the words they have for a file another
program wrote, also when the NUL came from the session's own write or edit; a write over it
still replaces it (the session's write observed it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_fs import Session, ToolResult, Workspace

pytestmark = pytest.mark.anyio

WorkspaceFactory = Callable[..., Workspace]  # the `make_workspace` fixture (conftest.py)


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


async def refusals(session: Session, path: Path) -> list[tuple[str | None, str]]:
    """What read, edit and edit_files answer about `path` (code, text)."""
    change = {"file_path": str(path), "old_string": "alpha", "new_string": "ALPHA"}
    results = [
        await session.call("read", {"file_path": str(path)}),
        await session.call("edit", change),
        await session.call("edit_files", {"edits": [change]}),
    ]
    return [(result.code, result.text) for result in results]


def binary(path: Path) -> list[tuple[str | None, str]]:
    return [
        ("FS_NOT_TEXT", f'Error: cannot read "{path}": binary file'),
        ("FS_NOT_TEXT", f'Error: cannot edit "{path}": binary file'),
        (
            "FS_NOT_TEXT",
            # SPEC §13: the message `edit` would give.
            f'Error: edit 1 of 1 ("{path}"): cannot edit "{path}": binary file',
        ),
    ]


async def test_a_file_the_session_wrote_with_a_nul_is_binary_to_every_tool(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    ok(await session.call("write", {"file_path": "a.txt", "content": "alpha\0beta\n"}))
    assert await refusals(session, root / "a.txt") == binary(root / "a.txt")
    assert (root / "a.txt").read_bytes() == b"alpha\0beta\n"
    ok(await session.call("write", {"file_path": "a.txt", "content": "alpha beta\n"}))
    assert (root / "a.txt").read_bytes() == b"alpha beta\n"


async def test_an_edit_that_adds_a_nul_leaves_a_file_the_next_edit_refuses(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "f.py").write_text("def main():\n    return alpha\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await session.call("read", {"file_path": "f.py"}))
    change = {"file_path": "f.py", "old_string": "return alpha", "new_string": "return \0alpha"}
    ok(await session.call("edit", change))
    assert await refusals(session, root / "f.py") == binary(root / "f.py")
    assert (root / "f.py").read_bytes() == b"def main():\n    return \0alpha\n"
