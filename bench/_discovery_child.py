"""One discovery workload, one implementation, in a fresh process:
``python -m bench._discovery_child SPEC``.

Prints one JSON object: per-iteration times (seconds), the peak RSS growth (KiB) from just
before the first call, and what was found (matches, files; requests for S3).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.fs import FsGlobQuery, FsGrepQuery
from dsh_fs.providers.local._ripgrep import _glob_argv, _grep_argv, find_rg

Spec = dict[str, Any]


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _rg(argv: list[str], root: str) -> bytes:
    done = subprocess.run(argv, cwd=root, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return done.stdout


async def _timed(repeats: int, step: Callable[[], Awaitable[int]]) -> tuple[list[float], int]:
    found = await step()  # warm-up: imports, page cache
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        found = await step()
        times.append(time.perf_counter() - start)
    return times, found


async def run(spec: Spec) -> dict[str, Any]:
    """Run the workload `spec` describes and return its measurements."""
    workload, impl, root = spec["workload"], spec["impl"], spec["root"]
    binary = find_rg()
    assert binary is not None, "the ripgrep wheel is not installed"
    config = DiscoveryConfig(native=spec.get("native", True), time_budget=600)
    extra: dict[str, Any] = {}
    if workload == "s3-grep":
        return await _s3_grep(spec)
    ws = Workspace.local(root, discovery=config)
    session = ws.session()
    before = _rss_kib()

    if workload == "grep":
        pattern = spec["pattern"]
        if impl == "dsh-fs":

            async def step() -> int:
                result = await session.call("grep", {"pattern": pattern})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0
        else:
            # The baseline is plain `rg PATTERN`: it reads the ignore files itself (dsh-fs
            # passes --no-ignore and a vetted copy of the same rules).
            argv = [
                arg
                for arg in _grep_argv(binary, FsGrepQuery(pattern=pattern), None, ".")
                if arg != "--no-ignore"
            ]

            async def step() -> int:
                return _rg(argv, root).count(b"\n")

    elif workload == "glob":
        if impl == "dsh-fs":

            async def step() -> int:
                result = await session.call("glob", {"pattern": "**/*.py"})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0
        else:
            argv = _glob_argv(binary, FsGlobQuery(pattern="**/*.py"))  # in no order
            if impl == "baseline-sorted":  # the listing that orders as glob does
                argv.insert(argv.index("--files"), "--sort=modified")

            async def step() -> int:
                return _rg(argv, root).count(b"\0")

    elif workload == "list":
        if impl == "dsh-fs":

            async def step() -> int:
                result = await session.call("list", {})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0
        else:

            async def step() -> int:
                with os.scandir(root) as scan:
                    entries = sorted(
                        (entry.name, entry.stat(follow_symlinks=False).st_size) for entry in scan
                    )
                return len(entries)

    else:
        raise SystemExit(f"unknown workload {workload!r}")

    times, found = await _timed(spec["repeats"], step)
    await ws.aclose()
    return {"times": times, "rss_kib": _rss_kib() - before, "found": found, **extra}


async def _s3_grep(spec: Spec) -> dict[str, Any]:
    """grep of a 2,000-object prefix on moto's S3 server (loopback), counting requests;
    each repetition alternates with its floor, the same objects read by boto3 alone."""
    from tests.s3_server import S3Server

    server = S3Server()
    server.start()
    try:
        assert server._server is not None
        app = server._server.app
        counted = {"requests": 0}

        def counting(environ: dict[str, Any], start_response: Any) -> Any:
            counted["requests"] += 1
            return app(environ, start_response)

        server._server.app = counting
        bucket = server.new_bucket()
        client = server.client()
        sources = sorted(Path(spec["root"], "packages").rglob("*.py"))[:1999]
        for path in sources:
            key = f"repo/{path.relative_to(spec['root'])}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        client.put_object(Bucket=bucket, Key="repo/special/rare.txt", Body=b"XYZZY_RARE_TOKEN\n")
        config = DiscoveryConfig(time_budget=600)
        options = server.storage_options()
        async with Workspace.remote(f"s3://{bucket}/repo", discovery=config, **options) as ws:
            session = ws.session()
            before = _rss_kib()
            per_call: list[int] = []

            async def step() -> int:
                start = counted["requests"]
                result = await session.call("grep", {"pattern": "XYZZY_RARE_TOKEN"})
                assert not result.is_error, result.text
                per_call.append(counted["requests"] - start)
                return int(result.value["total"]) if result.value else 0

            keys = [f"repo/{path.relative_to(spec['root'])}" for path in sources]
            keys.append("repo/special/rare.txt")
            found = await step()  # warm-up: imports, connections
            grown = _rss_kib() - before  # the grep's own peak, before any boto3 read
            _raw_reads(client, bucket, keys)
            times: list[float] = []
            raw_times: list[float] = []
            for _ in range(spec["repeats"]):  # the grep and its floor, alternating
                start = time.perf_counter()
                found = await step()
                times.append(time.perf_counter() - start)
                start = time.perf_counter()
                _raw_reads(client, bucket, keys)
                raw_times.append(time.perf_counter() - start)
        return {
            "times": times,
            "rss_kib": grown,
            "found": found,
            "requests": per_call[-1],
            "objects": len(sources) + 1,
            "baseline_times": raw_times,
        }
    finally:
        server.stop()


def _raw_reads(client: Any, bucket: str, keys: list[str]) -> None:
    """The floor under an S3 grep: every object listed and read with a plain boto3 client,
    one after another, searching nothing."""
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="repo/"):
        for _ in page.get("Contents", ()):
            pass
    for key in keys:
        client.get_object(Bucket=bucket, Key=key)["Body"].read()


def main() -> None:
    spec = json.loads(sys.argv[1])
    print(json.dumps(anyio.run(run, spec)))


if __name__ == "__main__":
    main()
