"""A fleet's costs (issue 43, SPEC §14). Run:

    .venv/bin/python -m bench.fleet [--quick]

- **A read's ledger write**: the same small read through a sandbox workspace whose ledger is
  in memory and one whose ledger is a ``redis-server`` on loopback, alternating call by call;
  the difference of the medians is what storing the observation costs (target <= 1 ms).
- **Replica scaling** (a record, not a target: the machine has few cores): ``read`` requests
  of the 2026-07-28 era (raw JSON-RPC over HTTP with httpx, each one a request of its own)
  from a load generator in this process, through HAProxy in round-robin to 1 and then 3
  ``dsh-fs mcp --http`` replicas on one local folder and one Redis ledger. Requests per
  second, and the CPU seconds each side spent per request (the load generator's own, the
  replicas', HAProxy's), so a generator that saturates a core is visible.

Rows say why they were skipped when ``redis-server`` or ``haproxy`` is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx

from dsh_fs import Workspace

_SBIN = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
_CLOCK = os.sysconf("SC_CLK_TCK")
_MODERN = "2026-07-28"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _redis(folder: Path) -> Iterator[str | None]:
    """A loopback ``redis-server`` (no persistence): its URL, or None when not installed."""
    binary = shutil.which("redis-server", path=_SBIN)
    if binary is None:
        yield None
        return
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if b"Ready to accept connections" in line:
            break
    threading.Thread(target=process.stdout.read, daemon=True).start()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()


async def _read_costs(root: Path, redis_url: str, repeat: int) -> tuple[list[float], list[float]]:
    from dsh_fs.providers import RedisLedger

    times: dict[bool, list[float]] = {False: [], True: []}
    memory = Workspace.sandbox(root)
    shared = Workspace.sandbox(root, observations=RedisLedger.from_url(redis_url, ttl=3600))
    async with memory, shared:
        sessions = {False: memory.session(), True: shared.session(principal="bench/agent")}
        for n in range(repeat + 50):
            for redis in (n % 2 == 0, n % 2 != 0):  # who goes first alternates
                start = time.perf_counter()
                result = await sessions[redis].call("read", {"file_path": "a.py"})
                took = time.perf_counter() - start
                assert not result.is_error, result.text
                if n >= 50:  # warm-up: imports, connections, the line index
                    times[redis].append(took)
    return times[False], times[True]


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK


def _replica(
    root: Path, redis_url: str, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "dsh_fs", "mcp", "--http", f"127.0.0.1:{port}", "--no-auth",
         "--observations", redis_url, "--allowed-host", "127.0.0.1:*", "--no-journal", str(root)],
        stderr=subprocess.PIPE,
        env=env,
    )  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:
        if b" serving MCP " in line:
            break
    else:
        raise SystemExit("a replica did not start")
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, port


async def _load(url: str, seconds: float, clients: int) -> int:
    """`clients` concurrent senders of sessionless ``read`` calls for `seconds`: how many
    were answered."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "read",
            "arguments": {"file_path": "a.py"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": _MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": _MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "read",
    }
    done = 0
    deadline = time.perf_counter() + seconds

    async def sender(http: httpx.AsyncClient) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            response = await http.post(url, json=body, headers=headers)
            assert response.status_code == 200, response.text
            assert '"isError":true' not in response.text, response.text
            done += 1

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with (
        httpx.AsyncClient(timeout=60, limits=limits) as http,
        anyio.create_task_group() as tg,
    ):
        for _ in range(clients):
            tg.start_soon(sender, http)
    return done


def _scaling(root: Path, redis_url: str, seconds: float) -> list[str]:
    haproxy = shutil.which("haproxy", path=_SBIN)
    if haproxy is None:
        return ["| replica scaling | skipped: haproxy is not installed (apt-get install haproxy) |"]
    rows = []
    env = {**os.environ, "HOME": str(root.parent), "XDG_STATE_HOME": str(root.parent / "state")}
    for count in (1, 3):
        replicas = [_replica(root, redis_url, env) for _ in range(count)]
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(512)
            port = listener.getsockname()[1]
            servers = "\n".join(
                f"    server r{i} 127.0.0.1:{p}" for i, (_, p) in enumerate(replicas)
            )
            config = root.parent / "haproxy.cfg"
            config.write_text(
                "global\n    maxconn 1024\ndefaults\n    mode http\n    timeout connect 2s\n"
                "    timeout client 60s\n    timeout server 60s\n"
                f"frontend mcp\n    bind fd@{listener.fileno()}\n    default_backend r\n"
                f"backend r\n    balance roundrobin\n{servers}\n",
                encoding="utf-8",
            )
            balancer = subprocess.Popen(
                [haproxy, "-db", "-f", str(config)], pass_fds=(listener.fileno(),)
            )
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            anyio.run(_load, url, 1.0, 4 * count)  # warm-up: imports, connections
            pids = [p.pid for p, _ in replicas] + [balancer.pid]
            before = [_cpu_of(pid) for pid in pids]
            mine = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            answered = anyio.run(_load, url, seconds, 4 * count)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_SELF)
            used = [_cpu_of(pid) - was for pid, was in zip(pids, before, strict=True)]
        finally:
            balancer.kill()
            balancer.wait()
            for process, _ in replicas:
                process.kill()
                process.wait()
        generator = (after.ru_utime - mine.ru_utime) + (after.ru_stime - mine.ru_stime)
        per = 1e3 / answered
        rows.append(
            f"| {count} replica{'s' if count > 1 else ''}, {4 * count} concurrent senders | "
            f"{answered / wall:.0f} requests/s | load generator {generator * per:.2f} ms CPU "
            f"per request ({100 * generator / wall:.0f}% of a core); replicas "
            f"{sum(used[:-1]) * per:.2f} ms; HAProxy {used[-1] * per:.2f} ms | record |"
        )
    return rows


def fleet_rows(quick: bool) -> list[str]:
    """The table's rows (a header, then one per measure); `make bench` prints them."""
    rows = ["| measure | result | detail | target |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root = folder / "ws"
        root.mkdir()
        (root / "a.py").write_text("def f():\n    return 1\n" * 20, encoding="utf-8")
        with _redis(folder) as redis_url:
            if redis_url is None:
                return [
                    *rows,
                    "| fleet | skipped: redis-server is not installed "
                    "(apt-get install redis-server) | | |",
                ]
            memory, redis = anyio.run(_read_costs, root, redis_url, 300 if quick else 2000)
            added = statistics.median(redis) - statistics.median(memory)
            rows.append(
                f"| a read's ledger write (loopback Redis) | +{added * 1e3:.3f} ms | "
                f"small read, median {statistics.median(memory) * 1e3:.3f} ms with the ledger "
                f"in memory, {statistics.median(redis) * 1e3:.3f} ms in Redis "
                f"({len(redis)} calls each, alternating) | <= 1 ms: "
                f"{'met' if added <= 1e-3 else 'not met'} |"
            )
            rows += _scaling(root, redis_url, 3.0 if quick else 10.0)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print("\n".join(fleet_rows(args.quick)))


if __name__ == "__main__":
    main()
