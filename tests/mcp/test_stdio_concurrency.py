"""Calls over stdio run concurrently: the task that reads a call runs it, and another task
takes over reading while it waits, so a quick call is not stuck behind a long one."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from .mcp_testing import make_root
from .stdio_pipes import initialize, notification, request

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_a_quick_call_read_after_a_long_one_is_answered_first(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with (root / "big.txt").open("wb") as big:
        for _ in range(64):
            big.write(b"the quick brown fox jumps over the lazy dog\n" * 24_000)
    wire = [
        initialize("init"),
        notification("notifications/initialized"),
        request(1, "tools/call", {"name": "read", "arguments": {"file_path": "big.txt"}}),
        request(2, "tools/call", {"name": "read", "arguments": {"file_path": "notes.txt"}}),
        request(3, "ping"),
    ]
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    answered: list[Any] = []
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            with anyio.fail_after(TIMEOUT):
                await process.stdin.send(b"".join(line + b"\n" for line in wire))
                await process.stdin.aclose()  # in one batch, then the end of input
                output = b""
                async for chunk in process.stdout:
                    output += chunk
                status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
    answered = [json.loads(line)["id"] for line in output.splitlines()]
    assert answered[0] == "init"
    assert answered.index(2) < answered.index(1)
    assert answered.index(3) < answered.index(1)
    assert sorted(answered[1:]) == [1, 2, 3]
    assert status == 0


async def test_a_backtracking_include_neither_freezes_the_server_nor_its_pings(
    tmp_path: Path,
) -> None:
    # ripgrep declines an include with ":", so the pure engine matches this glob against a
    # name the model could have created: Python's backtracking `re` took it (for practical
    # purposes) forever, on the event loop, and no ping was answered (hardening item 2).
    root = make_root(tmp_path)
    (root / ("a" * 200)).write_text("needle\n", encoding="utf-8")
    include = "*a" * 24 + "*:"
    wire = [
        initialize("init"),
        notification("notifications/initialized"),
        request(
            1,
            "tools/call",
            {"name": "grep", "arguments": {"pattern": "needle", "include": include}},
        ),
        request(2, "ping"),
    ]
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            with anyio.fail_after(TIMEOUT):
                await process.stdin.send(b"".join(line + b"\n" for line in wire))
                await process.stdin.aclose()
                output = b""
                async for chunk in process.stdout:
                    output += chunk
                status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
    answers = {message["id"]: message for message in map(json.loads, output.splitlines())}
    assert sorted(answers, key=str) == [1, 2, "init"]
    assert answers[2]["result"] == {}
    assert answers[1]["result"]["content"][0]["text"] == "No matches found"
    assert status == 0
