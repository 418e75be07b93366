"""Ctrl-C in a terminal stops ``dsh-fs mcp`` at once: one press, status 130, no traceback.

Nothing here is timed: the test waits for the server's answer to ``initialize`` (it is then
reading its input, past every import) before pressing ^C, and every wait is bounded only by
a generous deadline that a loaded machine does not reach.
"""

from __future__ import annotations

import json
import os
import sys
import termios
from pathlib import Path

import anyio
import pytest

DEADLINE = 240
"""Seconds the whole exchange may take: far above a loaded run, so only a hang reaches it."""

# The child makes the pty its controlling terminal, so ^C typed on it is a real SIGINT
# from the terminal's line discipline, sent to the child's process group. It also puts
# SIGINT back to its default, as a shell does for the command it runs in the foreground:
# an ignored SIGINT survives exec, and a suite started as a background job (`cmd &` in a
# script, nohup, some CI runners) hands one down; Python then installs no handler and the
# server rightly ignores ^C, so the test used to wait out its deadline.
LAUNCH = (
    "import fcntl, os, signal, sys, termios; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "terminal", "version": "0"},
    },
}


async def _read_until(master: int, done: bytes | None) -> bytes:
    """What the terminal shows until `done` appears (None: until the child is gone)."""
    seen = b""
    while done is None or done not in seen:
        await anyio.wait_readable(master)
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every process holding the terminal has exited
            return seen
        if not chunk:
            return seen
        seen += chunk
    return seen


@pytest.mark.anyio
async def test_one_ctrl_c_stops_the_stdio_server_in_a_terminal_with_status_130(
    tmp_path: Path,
) -> None:
    master, slave = os.openpty()
    mode = termios.tcgetattr(slave)
    mode[3] &= ~termios.ECHO  # what the test types is not shown back to it
    termios.tcsetattr(slave, termios.TCSANOW, mode)
    child = await anyio.open_process(
        [sys.executable, "-c", LAUNCH, "-m", "dsh_fs", "mcp", str(tmp_path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    try:
        with anyio.fail_after(DEADLINE):
            os.write(master, json.dumps(INITIALIZE).encode() + b"\n")
            greeting = await _read_until(master, b"\n")
            assert b'"serverInfo"' in greeting, greeting
            os.write(master, termios.tcgetattr(master)[6][termios.VINTR])
            after = await _read_until(master, None)
            status = await child.wait()
    finally:
        if child.returncode is None:
            child.kill()
            with anyio.CancelScope(shield=True):
                await child.wait()
        os.close(master)
    assert status == 130
    assert after.strip() == b"", after.decode(errors="replace")
