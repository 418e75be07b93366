"""Lines a strict parser refuses, and lines too long to read: every request whose id can be
found gets an answer to it (the tool's own error where it has one), nothing is torn, and a
100 MiB message costs the server little memory (issue 17, items 3 and 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.mcp.stdio._handshake import serve_lines
from dsh_fs.mcp.stdio._lines import DEFAULT_MAX_MESSAGE_SIZE, LineReader, LineWriter

from .mcp_testing import make_root
from .stdio_pipes import exchange, initialize, notification

pytestmark = pytest.mark.anyio

LOSSY = "Error: tool execution arguments must be losslessly JSON-serializable"


def _call(ident: int, arguments: bytes, tool: bytes = b"read") -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", '
        b'"arguments": %s}}' % (ident, tool, arguments)
    )


async def _serve(root: Path, lines: list[bytes], *, limit: int | None = None) -> dict[Any, Any]:
    async with Workspace.sandbox(root) as workspace:

        async def lean(reader: LineReader, writer: LineWriter) -> None:
            await serve_lines(workspace, reader, writer)

        with anyio.fail_after(60):
            handshake = [initialize("init"), notification("notifications/initialized")]
            answers = await exchange(lean, [*handshake, *lines], limit=limit)
    return {answer.get("id"): answer for answer in answers}


def _text(answer: dict[str, Any]) -> tuple[str | None, str]:
    result = answer["result"]
    return (result.get("_meta") or {}).get("dsh-fs/code"), result["content"][0]["text"]


async def test_what_a_strict_parser_refuses_reaches_the_tool_and_gets_its_error(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    deep = b"[" * 250 + b"]" * 250
    answers = await _serve(
        root,
        [
            _call(1, b'{"file_path": %s}' % deep),
            _call(2, b'{"file_path": "surrogate.txt", "content": "a\\ud800b"}', b"write"),
            _call(3, b'{"file_path": "notes.txt", "offset": %s}' % (b"7" * 5000)),
            _call(4, b'{"file_path": "notes.txt", "limit": -%s}' % (b"7" * 5000)),
        ],
    )
    assert _text(answers[1]) == (
        "INVALID_ARGS",
        'Error: invalid arguments: "file_path" must be a string',
    )
    code, text = _text(answers[2])
    assert code == "FS_NOT_TEXT"
    assert text == f'Error: cannot write "{root / "surrogate.txt"}": invalid UTF-8 text'
    assert not (root / "surrogate.txt").exists()
    assert _text(answers[3]) == ("INVALID_ARGS", LOSSY)
    assert _text(answers[4]) == ("INVALID_ARGS", LOSSY)


async def test_a_line_that_cannot_be_parsed_is_answered_to_the_id_it_shows(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    answers = await _serve(
        root,
        [
            _call(1, b'{"file_path": %s}' % (b"[" * 20_000 + b"]" * 20_000)),
            _call(2, b'{"file_path": "notes.txt"'),  # cut short
            _call(3, b'{"file_path": "caf\xe9.txt"}'),  # not UTF-8
            b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read", '
            b'"arguments": {"file_path": "notes.txt",}}, "id": "last"}',
            _call(5, b'{"file_path": "notes.txt"}'),
        ],
    )
    too_deep = "Parse error: the message nests arrays or objects too deeply"
    assert answers[1]["error"] == {"code": -32700, "message": too_deep}
    for ident in (2, 3, "last"):
        assert answers[ident]["error"] == {"code": -32700, "message": "Parse error"}
    assert _text(answers[5])[1].endswith("(End of file - total 3 lines)\n</content>")


async def test_a_line_over_the_limit_is_refused_to_its_id_and_the_next_is_served(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    content = b'"' + b"x" * 100_000 + b'"'
    id_last = (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "write", "arguments": '
        b'{"file_path": "big.txt", "content": %s}}, "id": "at-the-end"}' % content
    )
    answers = await _serve(
        root,
        [
            _call(1, b'{"file_path": "big.txt", "content": %s}' % content, b"write"),
            id_last,
            _call(3, b'{"file_path": "notes.txt", "limit": 1}'),
        ],
        limit=64 * 1024,
    )
    for ident in (1, "at-the-end"):
        error = answers[ident]["error"]
        assert error["code"] == -32600
        assert error["message"].startswith("Request too large: 1001")
        assert error["message"].endswith(
            "bytes, over this server's limit of 65536 bytes (dsh-fs mcp --max-message-size)"
        )
    assert not (root / "big.txt").exists()
    assert "1: alpha" in _text(answers[3])[1]


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _reply(stdout: Any) -> dict[str, Any]:
    line = stdout.readline()
    assert line, "the server closed its output"
    reply: dict[str, Any] = json.loads(line)
    return reply


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_100_mib_message_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """Before the limit, a 100 MiB `write` peaked at 466 MiB; now the server holds at most
    the limit's worth of the line before it knows the line is too long."""
    root = make_root(tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        server.stdin.write(initialize("init") + b"\n")
        server.stdin.flush()
        assert _reply(server.stdout)["id"] == "init"
        before = _peak_rss_kib(server.pid)
        server.stdin.write(
            b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write", '
            b'"arguments": {"file_path": "huge.txt", "content": "'
        )
        block = b"y" * (1 << 20)
        for _ in range(100):
            server.stdin.write(block)
        server.stdin.write(b'"}}}\n' + _call(8, b'{"file_path": "notes.txt"}') + b"\n")
        server.stdin.flush()
        refused, served = _reply(server.stdout), _reply(server.stdout)
        growth_mib = (_peak_rss_kib(server.pid) - before) / 1024
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        server.stdout.close()
    assert refused["id"] == 7
    assert refused["error"]["message"].startswith("Request too large: 104857")
    assert served["id"] == 8
    assert not (root / "huge.txt").exists()
    assert growth_mib < DEFAULT_MAX_MESSAGE_SIZE / (1 << 20) + 16, growth_mib
