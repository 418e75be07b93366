"""A write's `structuredContent` never carries an outside file swapped in by another process.

In process (the server object and the SDK client), with the policy off and structured
results on: the write's `before` is what a client program receives.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from dsh_fs import Workspace
from dsh_fs.fs import FileSystem
from dsh_fs.mcp import create_server

from ..providers.test_sandbox_write_races import SECRET, SwapBeforeWrite, swapping_sandbox

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("platform_paths")]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    (top / "root").mkdir()
    (top / "root" / "target.txt").write_text("inside\n", encoding="utf-8")
    (top / "outside").mkdir()
    (top / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return top


async def structured_write(fs: FileSystem, root: Path) -> tuple[object, str]:
    """One policy-free `write` of ``target.txt`` over MCP: its structured content and text."""
    async with Workspace(fs, cwd=root, policy=False) as workspace:
        server = create_server(workspace, structured=True)
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                result = await client.call_tool(
                    "write", {"file_path": "target.txt", "content": "mine\n"}
                )
    assert not result.is_error
    text = "".join(getattr(block, "text", "") for block in result.content)
    return result.structured_content, text


async def test_a_target_swapped_for_an_outside_link_is_not_in_structured_content(
    tree: Path,
) -> None:
    root, victim = tree / "root", tree / "root" / "target.txt"
    # Control: through a bare provider the same swap reaches the client.
    leaked, _ = await structured_write(
        SwapBeforeWrite(root, victim, tree / "outside" / "secret.txt"), root
    )
    assert isinstance(leaked, dict)
    assert leaked["before"] == SECRET
    victim.unlink()
    victim.write_text("inside\n", encoding="utf-8")

    fs, swaps = swapping_sandbox(tree)
    structured, text = await structured_write(fs, root)
    assert swaps() == 1
    assert structured == {
        "path": str(victim),
        "operation": "update",
        "before": None,
        "after": "mine\n",
    }
    assert "secret" not in text
    assert (tree / "outside" / "secret.txt").read_text(encoding="utf-8") == SECRET
