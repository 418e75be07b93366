"""Edit recovery over MCP: the diagnosis is in the text, and in structuredContent when the
server returns structured results (SPEC §8.2)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from dsh_fs import Workspace
from dsh_fs.mcp import CODE_META_KEY, create_server

from .mcp_testing import make_root

pytestmark = pytest.mark.anyio


async def test_a_missed_edit_carries_its_diagnosis_in_text_and_structured_content(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    async with Workspace.sandbox(root) as workspace:
        server = create_server(workspace, structured=True)
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                await client.call_tool("read", {"file_path": "notes.txt"})
                edit = await client.call_tool(
                    "edit",
                    {"file_path": "notes.txt", "old_string": "alpha\n  beta", "new_string": "x"},
                )
    assert edit.is_error
    assert (edit.meta or {})[CODE_META_KEY] == "FS_EDIT_NOT_FOUND"
    text = edit.content[0].text  # type: ignore[union-attr]
    assert text.split("\n")[:3] == [
        f'Error: old_string was not found in "{root / "notes.txt"}"',
        "The closest text in the file is at lines 1-2; it differs from old_string:",
        "- indentation: line 2 is indented 2 fewer spaces in the file than in old_string "
        "(line 2: nothing vs 2 spaces)",
    ]
    assert edit.structured_content is not None
    error = edit.structured_content["error"]
    assert (error["name"], error["code"]) == ("FsError", "FS_EDIT_NOT_FOUND")
    assert error["details"]["closest"] == {"start": 1, "end": 2}
    assert [r["cause"] for r in error["details"]["reasons"]] == ["indentation"]
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nbeta\ngamma\n"
