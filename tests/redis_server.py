"""A real Redis server on loopback for the tests: Debian's ``redis-server`` in a temp dir.

`RedisServer` picks a free port on 127.0.0.1, runs ``redis-server`` there with no
persistence and its files in the given folder, and returns once the server says it accepts
connections. `redis_or_skip` skips a test, saying why, where the binary or the ``redis``
package is missing (``apt-get install redis-server``; ``pip install 'dsh-fs[fleet]'``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

__all__ = ["RedisServer", "redis_or_skip"]

_READY = b"Ready to accept connections"


def redis_or_skip() -> str:
    """The ``redis-server`` binary; skips the test (with the reason) when it can't be had."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    pytest.importorskip("redis", reason="the redis package is missing (dsh-fs[fleet])")
    return binary


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """``redis-server`` on 127.0.0.1, started and stopped by the test (same port each time)."""

    def __init__(self, binary: str, folder: Path) -> None:
        self._binary = binary
        self._folder = folder
        self.port = _free_port()
        """The loopback port it listens on."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Run the server; returns once it accepts connections (or raises with its log)."""
        self._folder.mkdir(parents=True, exist_ok=True)
        command = [
            self._binary,
            "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self._folder),
            "--save", "", "--appendonly", "no", "--protected-mode", "no",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self._process = process
        assert process.stdout is not None
        seen = b""
        # The server prints its readiness line once it listens; a server that exits (a port
        # taken in the meantime) ends the output, so the loop always ends.
        for line in process.stdout:
            seen += line
            if _READY in line:
                # Keep reading what it logs afterwards, so a full pipe never stalls it.
                threading.Thread(target=process.stdout.read, daemon=True).start()
                return
        raise RuntimeError(f"redis-server did not start:\n{seen.decode(errors='replace')}")

    def stop(self) -> None:
        """Stop the server and wait for it (harmless when it is not running)."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
