"""Over MCP stdio, an image `read` is one image content block (SPEC §10), on the lean
server (handshake era) and the SDK's (2026-07-28 era), with the official client."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import ImageContent, TextContent

from ..images import jpeg, png
from .mcp_testing import BOTH_ERAS, Era, make_root, stdio_server

pytestmark = pytest.mark.anyio

TIMEOUT = 60
"""A guard against a hang, not a speed target (the server is a child process)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = make_root(tmp_path)
    (folder / "red.png").write_bytes(png())
    (folder / "photo.jpg").write_bytes(jpeg())
    (folder / "big.png").write_bytes(png(padding=4096))
    return folder


@BOTH_ERAS
async def test_an_image_read_is_one_image_block_and_authorizes_a_write(
    root: Path, era: Era
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            image = await client.call_tool("read", {"file_path": "red.png"})
            photo = await client.call_tool("read", {"file_path": "photo.jpg"})
            written = await client.call_tool("write", {"file_path": "red.png", "content": "x"})
    assert not image.is_error
    (block,) = image.content
    assert isinstance(block, ImageContent)
    assert block.mime_type == "image/png"
    assert base64.b64decode(block.data) == png()
    (jpeg_block,) = photo.content
    assert isinstance(jpeg_block, ImageContent)
    assert jpeg_block.mime_type == "image/jpeg"
    assert not written.is_error
    assert (root / "red.png").read_text(encoding="utf-8") == "x"


@BOTH_ERAS
async def test_the_image_cap_is_the_command_lines_and_its_refusal_is_text(
    root: Path, era: Era
) -> None:
    size = (root / "big.png").stat().st_size
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server("--max-image-size", "1K", str(root)), mode=era) as client:
            refused = await client.call_tool("read", {"file_path": "big.png"})
            windowed = await client.call_tool("read", {"file_path": "red.png", "limit": 5})
    assert refused.is_error
    (text,) = refused.content
    assert isinstance(text, TextContent)
    assert text.text == (
        f'Error: cannot read "{root}/big.png": image of {size} bytes is over the 1024-byte limit'
    )
    assert windowed.is_error
    assert (refused.meta or {}).get("dsh-fs/code") == "FS_TOO_LARGE"
