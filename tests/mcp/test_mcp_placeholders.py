"""The placeholder guard over MCP (SPEC §8.3): on by default, off with
``--allow-placeholders``; the real client SDK drives ``python -m dsh_fs mcp``."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from .mcp_testing import HANDSHAKE, make_root, stdio_server

pytestmark = pytest.mark.anyio

BEFORE = "".join(f"line {k}\n" for k in range(1, 11))
AFTER = "line 1\n// ... existing code ...\nline 10\n"


@pytest.mark.parametrize("allow", [False, True], ids=["default", "allow-placeholders"])
async def test_a_placeholder_write_is_refused_unless_the_operator_allows_it(
    tmp_path: Path, allow: bool
) -> None:
    root = make_root(tmp_path)
    path = root / "a.js"
    path.write_text(BEFORE, encoding="utf-8")
    flags = ["--allow-placeholders"] if allow else []
    with anyio.fail_after(120):
        async with Client(stdio_server(*flags, str(root)), mode=HANDSHAKE) as client:
            await client.call_tool("read", {"file_path": "a.js"})
            result = await client.call_tool("write", {"file_path": "a.js", "content": AFTER})
    code = (result.meta or {}).get("dsh-fs/code")
    if allow:
        assert not result.is_error
        assert path.read_text(encoding="utf-8") == AFTER
    else:
        assert result.is_error
        assert code == "FS_PLACEHOLDER"
        assert path.read_text(encoding="utf-8") == BEFORE


def test_the_printed_host_entry_keeps_allow_placeholders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dsh_fs.cli import main
    from dsh_fs.providers import default_journal_location

    assert main(["mcp", "--allow-placeholders", "--print-config", "claude", str(tmp_path)]) == 0
    config = json.loads(capsys.readouterr().out)
    pinned = ["--journal", default_journal_location()]  # the store every entry pins
    expected = ["--allow-placeholders", *pinned, str(tmp_path)]
    assert config["mcpServers"]["dsh-fs"]["args"][3:] == expected
