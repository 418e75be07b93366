"""``dsh-fs mcp --encoding PATTERN=CODEC --encoding-fallback CODEC ROOT`` driven by the real
MCP client SDK (SPEC §12): a GBK file and a fallback cp1252 file read and edited byte for
byte."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from .mcp_testing import BOTH_ERAS, Era, stdio_server
from .test_mcp_stdio import TIMEOUT, code_of, text_of

pytestmark = pytest.mark.anyio


@BOTH_ERAS
async def test_a_client_reads_and_edits_files_in_declared_and_fallback_codecs(
    tmp_path: Path, era: Era
) -> None:
    root = (tmp_path / "w").resolve()
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.txt").write_bytes("中文文本\r\n第二行\r\n".encode("gbk"))
    (root / "old.c").write_bytes("/* café */\n".encode("cp1252"))
    server = stdio_server(
        "--encoding", "docs/*.txt=gbk", "--encoding-fallback", "cp1252", str(root)
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode=era) as client:
            read = await client.call_tool("read", {"file_path": "docs/a.txt"})
            edited = await client.call_tool(
                "edit", {"file_path": "docs/a.txt", "old_string": "第二行", "new_string": "第三行"}
            )
            await client.call_tool("read", {"file_path": "old.c"})
            refused = await client.call_tool(
                "edit", {"file_path": "old.c", "old_string": "café", "new_string": "咖啡"}
            )
    assert text_of(read).splitlines()[3:5] == ["1: 中文文本", "2: 第二行"]
    assert not edited.is_error, text_of(edited)
    assert (root / "docs" / "a.txt").read_bytes() == "中文文本\r\n第三行\r\n".encode("gbk")
    assert code_of(refused) == "FS_NOT_ENCODABLE"
    assert text_of(refused) == (
        f'Error: cannot edit "{root}/old.c": cp1252 cannot encode "咖" (U+5496) in new_string'
    )
    assert (root / "old.c").read_bytes() == "/* café */\n".encode("cp1252")
