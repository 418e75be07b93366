"""A fleet on loopback (SPEC §14): an S3 server in a process of its own, Redis, HAProxy in
round-robin and three ``dsh-fs mcp --http`` replicas serving one ``s3://`` root.

`running_fleet` brings it up and down; `FleetAgent` is one agent's client (the official
client in the 2026-07-28 era, through the load balancer) that records which replica
answered each request (HAProxy names it in an ``X-Replica`` header). Every piece skips the
test, saying why, when its package is missing (``apt-get install haproxy redis-server``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Implementation, TextContent
from mcp_types.version import LATEST_MODERN_VERSION

from ..mcp.http_testing import TIMEOUT, HttpServer, http_server
from ..redis_server import RedisServer, redis_or_skip
from ..s3_server import DUMMY_CREDENTIALS

__all__ = ["ALICE", "BOB", "Fleet", "FleetAgent", "running_fleet"]

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"
REPLICAS = 3
_REPO = Path(__file__).resolve().parents[2]


@dataclass
class Fleet:
    """What `running_fleet` brought up."""

    url: str
    """The load balancer's MCP endpoint."""
    root: str
    """The served ``s3://bucket/ws``."""
    env: dict[str, str]
    """The environment of a ``dsh-fs`` process that reaches the S3 server (the standard AWS
    variables only)."""
    replicas: list[HttpServer]
    """The three servers, in HAProxy's order (``r0``, ``r1``, ``r2``)."""
    redis: RedisServer
    """The shared ledger."""
    s3: Any
    """A boto3 client on the S3 server (the out-of-band writer)."""
    bucket: str
    """The bucket the root is in."""

    def dsh_fs(self, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        """``dsh-fs ARGS`` from another process (as from another machine), for at most
        `timeout` seconds."""
        return subprocess.run(
            [sys.executable, "-m", "dsh_fs", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def object(self, key: str) -> bytes:
        """The bytes of the object `key` (under the root), read past every replica."""
        body: Any = self.s3.get_object(Bucket=self.bucket, Key=f"ws/{key}")["Body"]
        return bytes(body.read())


@dataclass
class FleetAgent:
    """One agent (a token) under one client name, calling through the load balancer in
    the sessionless era; each call is its own request, on whichever replica HAProxy picks
    (it balances every request, kept-alive connection or not).

    Used as ``async with FleetAgent(...) as agent``: the agent keeps one HTTP client for
    all its calls. A client built per call loads the system's CA bundle into a new TLS
    context every time (about 150 ms of CPU, on a loopback ``http://`` URL): that was most
    of the 1,000-edit run's time, the load generator starving the replicas it measures.
    """

    url: str
    token: str
    name: str
    replicas: Counter[str] = field(default_factory=Counter)
    """How many answers each replica gave this agent."""
    _http: httpx2.AsyncClient | None = field(default=None, repr=False)
    _answered: list[str] = field(default_factory=list, repr=False)

    async def __aenter__(self) -> FleetAgent:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"})
        http.event_hooks["response"].append(self._note)
        self._http = await http.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    async def _note(self, response: httpx2.Response) -> None:
        replica = response.headers.get("x-replica")
        if replica is not None and response.request.method == "POST":
            self._answered.append(replica)

    async def call(self, tool: str, arguments: dict[str, object]) -> tuple[str | None, str]:
        """Call `tool`: (the error code of a refusal or None, the result's text), and the
        replica that answered counted in `replicas`. One call at a time per agent.

        Raises:
            Exception: the request failed on its way (a replica killed under it).
        """
        assert self._http is not None, "async with FleetAgent(...) first"
        self._answered.clear()
        async with Client(
            streamable_http_client(self.url, http_client=self._http),
            mode=LATEST_MODERN_VERSION,
            client_info=Implementation(name=self.name, version="1"),
        ) as client:
            result = await client.call_tool(tool, arguments)
        self.replicas.update(self._answered[-1:])
        text = "".join(b.text for b in result.content if isinstance(b, TextContent))
        code = (result.meta or {}).get("dsh-fs/code") if result.is_error else None
        return code, text


def _need(binary: str, package: str) -> str:
    # Debian installs daemons in /usr/sbin, which a non-root PATH often leaves out.
    found = shutil.which(binary, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if found is None:
        pytest.skip(f"{binary} is not installed (apt-get install {package})")
    return found


def _haproxy_config(fd: int, replicas: list[HttpServer]) -> str:
    servers = "\n".join(
        # `check`: a replica that stops answering (SIGKILL) leaves the rotation within
        # a few hundred milliseconds; `redispatch` retries a refused connect elsewhere.
        f"    server r{i} {replica.host}:{replica.port} check inter 100ms fall 1 rise 1"
        for i, replica in enumerate(replicas)
    )
    return (
        "global\n    maxconn 512\n"
        "defaults\n    mode http\n    timeout connect 2s\n    timeout client 120s\n"
        "    timeout server 120s\n    retries 3\n    option redispatch\n"
        f"frontend mcp\n    bind fd@{fd}\n    default_backend replicas\n"
        "backend replicas\n    balance roundrobin\n"
        "    http-response set-header X-Replica %s\n"
        f"{servers}\n"
    )


@contextlib.asynccontextmanager
async def _s3_process() -> AsyncIterator[str]:
    """``python -m tests.s3_server``: its endpoint URL, until the block ends."""
    env = {**os.environ, **DUMMY_CREDENTIALS}
    process = await anyio.open_process(
        [sys.executable, "-m", "tests.s3_server"], cwd=_REPO, env=env, stderr=None
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(TIMEOUT):
            line = b""
            async for chunk in process.stdout:
                line += chunk
                if b"\n" in line:
                    break
        endpoint = line.decode().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", endpoint), endpoint
        yield endpoint
    finally:
        if process.stdin is not None:
            await process.stdin.aclose()
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.aclose()


@contextlib.asynccontextmanager
async def _haproxy(binary: str, replicas: list[HttpServer], folder: Path) -> AsyncIterator[str]:
    """HAProxy in front of `replicas` on a socket bound here (``bind fd@N``: connections
    queue until it accepts them, so there is nothing to wait for); its MCP URL."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        port = listener.getsockname()[1]
        path = folder / "haproxy.cfg"
        path.write_text(_haproxy_config(listener.fileno(), replicas), encoding="utf-8")
        process: Process = await anyio.open_process(
            [binary, "-db", "-f", str(path)],
            pass_fds=(listener.fileno(),),
            stdout=None,
            stderr=None,
        )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.aclose()


@contextlib.asynccontextmanager
async def running_fleet(tmp_path: Path) -> AsyncIterator[Fleet]:
    """The fleet, with a file ``counter.txt`` (``count: 0``) under its root."""
    import boto3

    haproxy = _need("haproxy", "haproxy")
    redis = RedisServer(redis_or_skip(), tmp_path / "redis")
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{ALICE} alice\n{BOB} bob\n", encoding="utf-8")
    tokens.chmod(0o600)
    redis.start()
    try:
        async with _s3_process() as endpoint:
            s3 = boto3.client(
                "s3",
                endpoint_url=endpoint,
                aws_access_key_id=DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                region_name=DUMMY_CREDENTIALS["AWS_DEFAULT_REGION"],
            )
            bucket = "fleet"
            s3.create_bucket(Bucket=bucket)
            s3.put_object(Bucket=bucket, Key="ws/counter.txt", Body=b"count: 0\n")
            home = tmp_path / "home"
            home.mkdir()
            env = {
                **os.environ,
                **DUMMY_CREDENTIALS,
                "AWS_ENDPOINT_URL": endpoint,
                "AWS_CONFIG_FILE": os.devnull,
                "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                "HOME": str(home),
                "XDG_STATE_HOME": str(home / "state"),
            }
            env.pop("AWS_PROFILE", None)
            root = f"s3://{bucket}/ws"
            flags = (
                "--tokens", str(tokens), "--observations", redis.url,
                "--allowed-host", "127.0.0.1:*", root,
            )  # fmt: skip
            async with contextlib.AsyncExitStack() as stack:
                replicas = [
                    await stack.enter_async_context(http_server(None, *flags, env=env))
                    for _ in range(REPLICAS)
                ]
                url = await stack.enter_async_context(_haproxy(haproxy, replicas, tmp_path))
                yield Fleet(
                    url=url,
                    root=root,
                    env=env,
                    replicas=replicas,
                    redis=redis,
                    s3=s3,
                    bucket=bucket,
                )
    finally:
        redis.stop()
