"""move, delete, mkdir and the path rules over MCP stdio, driven by the real MCP client SDK
(``python -m dsh_fs mcp --deny ... ROOT``), in both protocol eras."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import Client

from .mcp_testing import BOTH_ERAS, Era, stdio_server
from .test_mcp_stdio import TIMEOUT, code_of, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = (tmp_path / "w").resolve()
    (top / ".git").mkdir(parents=True)
    (top / ".git" / "HEAD").write_text("ref: main\n", encoding="utf-8")
    (top / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (top / "notes.txt").write_text("one\n", encoding="utf-8")
    return top


@BOTH_ERAS
async def test_a_client_moves_deletes_and_makes_directories_with_the_rules_applied(
    root: Path, era: Era
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server("--deny", ".env", str(root)), mode=era) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            made = await client.call_tool("mkdir", {"path": "docs"})
            unread = await client.call_tool(
                "move", {"source_path": "notes.txt", "destination_path": "docs/notes.txt"}
            )
            await client.call_tool("read", {"file_path": "notes.txt"})
            moved = await client.call_tool(
                "move", {"source_path": "notes.txt", "destination_path": "docs/notes.txt"}
            )
            secret = await client.call_tool("read", {"file_path": ".env"})
            overwrite = await client.call_tool("write", {"file_path": ".env", "content": "x"})
            git = await client.call_tool("delete", {"file_path": ".git/HEAD"})
            await client.call_tool("read", {"file_path": "docs/notes.txt"})
            deleted = await client.call_tool("delete", {"file_path": "docs/notes.txt"})
            emptied = await client.call_tool("delete", {"file_path": "docs"})
    assert names[-3:] == ["move", "delete", "mkdir"]
    assert text_of(made) == f"Created directory {root}/docs"
    assert code_of(unread) == "FS_NOT_OBSERVED"
    assert text_of(moved) == f"Moved {root}/notes.txt to {root}/docs/notes.txt"
    assert (code_of(secret), text_of(secret)) == (
        "FS_NOT_FOUND",
        f'Error: cannot read "{root}/.env": not found',
    )
    assert code_of(overwrite) == "FS_SANDBOX_DENIED"
    assert 'denied by rule ".env"' in text_of(overwrite)
    assert 'protected by rule ".git/"' in text_of(git)
    assert text_of(deleted) == f"Deleted {root}/docs/notes.txt"
    assert text_of(emptied) == f"Deleted {root}/docs"
    assert sorted(os.listdir(root)) == [".env", ".git"]
    assert (root / ".env").read_text(encoding="utf-8") == "SECRET=1\n"
    assert (root / ".git" / "HEAD").exists()


@BOTH_ERAS
async def test_a_client_edits_two_files_in_one_set_and_a_failing_set_changes_none(
    root: Path, era: Era
) -> None:
    (root / "a.py").write_text("old_name()\n", encoding="utf-8")
    (root / "b.py").write_text("old_name()\n", encoding="utf-8")
    rename = [
        {"file_path": name, "old_string": "old_name", "new_string": "new_name"}
        for name in ("a.py", "b.py")
    ]
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            await client.call_tool("read", {"file_path": "a.py"})
            await client.call_tool("read", {"file_path": "b.py"})
            missing = {"file_path": "b.py", "old_string": "absent", "new_string": "x"}
            refused = await client.call_tool("edit_files", {"edits": [*rename, missing]})
            untouched = (root / "a.py").read_text(encoding="utf-8")
            edited = await client.call_tool("edit_files", {"edits": rename})
    assert code_of(refused) == "FS_EDIT_NOT_FOUND"
    assert text_of(refused).startswith(f'Error: edit 3 of 3 ("{root}/b.py"): ')
    assert untouched == "old_name()\n"
    assert text_of(edited) == f"Edited 2 files (2 replacements)\n- {root}/a.py\n- {root}/b.py"
    assert (root / "b.py").read_text(encoding="utf-8") == "new_name()\n"
