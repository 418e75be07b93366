"""One discovery workload, one implementation, in a fresh process:
``python -m bench._discovery_child SPEC``.

Prints one JSON object: per-iteration times (seconds), the peak RSS growth (KiB) from just
before the first call, and what was found (matches, files; requests for S3).
"""

from __future__ import annotations

import itertools
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

from bench._monorepo import _PY, RARE, _source
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
    if workload == "s3-remote":
        return await _s3_remote(spec)
    ws = Workspace.local(root, discovery=config)
    session = ws.session()
    before = _rss_kib()

    if workload == "grep":
        pattern = spec["pattern"]
        if impl == "dsh-fs" and spec.get("fresh"):
            # Each grep in a workspace of its own: the first grep of a root, which walks the
            # names to find the ignore files (no listing kept from an earlier grep).

            async def step() -> int:
                async with Workspace.local(root, discovery=config) as fresh:
                    result = await fresh.session().call("grep", {"pattern": pattern})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0
        elif impl == "dsh-fs":

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


S3_OBJECTS = 2000
"""Objects below the searched prefix of the S3 workloads."""

S3_CONCURRENCY = 16
"""Requests in flight of the plain boto3 client under the remote rows (issue 44's)."""


def _s3_sources() -> list[tuple[str, bytes]]:
    """The remote rows' objects: Python sources in the monorepo's style (four in five a
    ~10 KB module, the rest a ~2 KB test), one of them holding the rare token."""
    objects = [
        (
            f"repo/packages/pkg{i // 400:02}/src/mod{i // 20 % 20:02}/file{i % 20:02}.py",
            _source(_PY, i + 1, 34 if i % 5 else 6),
        )
        for i in range(S3_OBJECTS - 1)
    ]
    objects.append(("repo/special/rare.txt", f"{RARE}\n".encode()))
    return objects


class _S3Process:
    """moto's S3 server in a process of its own (`serve_s3`): its URL, and how many
    requests it has answered."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench._discovery_child", "serve-s3"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        assert self._proc.stdin is not None
        self._in, self._out = self._proc.stdin, self._proc.stdout
        self.url = self._out.readline().strip()

    def requests(self) -> int:
        """Requests answered so far."""
        self._in.write("count\n")
        self._in.flush()
        return int(self._out.readline())

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (user + system)."""
        with open(f"/proc/{self._proc.pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self._in.close()
        self._proc.wait(timeout=30)


def serve_s3() -> None:
    """``python -m bench._discovery_child serve-s3``: `tests.s3_server`'s server, counting
    requests; prints its URL, then answers each ``count`` line with the count so far."""
    from tests.s3_server import running_s3_server

    with running_s3_server() as server:
        assert server._server is not None
        app = server._server.app
        counter = itertools.count()
        seen = [0]

        def counting(environ: dict[str, Any], start_response: Any) -> Any:
            seen[0] = next(counter) + 1  # next() is atomic: requests run in threads
            return app(environ, start_response)

        server._server.app = counting
        print(server.endpoint_url, flush=True)
        for _ in sys.stdin:
            print(seen[0], flush=True)


async def _s3_remote(spec: Spec) -> dict[str, Any]:
    """Issue 44's remote rows: grep and glob of a 2,000-object prefix on moto's S3 server
    in a process of its own, each repetition alternating with its floor: the same objects
    read by a plain boto3 client with 16 concurrent `get_object` requests, and one
    recursive listing (`list_objects_v2`, paginated). Wall and CPU time of this process
    (the client), and the server's CPU time, per call."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3
    from tests.s3_server import DUMMY_CREDENTIALS, use_dummy_credentials

    use_dummy_credentials()
    server = _S3Process()
    try:
        client = boto3.client("s3", endpoint_url=server.url)
        bucket = "bench-remote"
        client.create_bucket(Bucket=bucket)
        objects = _s3_sources()
        pool = ThreadPoolExecutor(S3_CONCURRENCY)
        list(
            pool.map(
                lambda item: client.put_object(Bucket=bucket, Key=item[0], Body=item[1]), objects
            )
        )
        keys = [key for key, _ in objects]

        def listing() -> int:
            pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="repo/")
            return sum(len(page.get("Contents", ())) for page in pages)

        def reads() -> int:
            listing()
            got = pool.map(
                lambda key: client.get_object(Bucket=bucket, Key=key)["Body"].read(), keys
            )
            return sum(data.count(RARE.encode()) for data in got)

        options: dict[str, Any] = {
            "key": DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "secret": DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "token": DUMMY_CREDENTIALS["AWS_SESSION_TOKEN"],
            "endpoint_url": server.url,
            "client_kwargs": {"region_name": DUMMY_CREDENTIALS["AWS_DEFAULT_REGION"]},
            "skip_instance_cache": True,
        }
        config = DiscoveryConfig(time_budget=600)
        async with Workspace.remote(f"s3://{bucket}/repo", discovery=config, **options) as ws:
            session = ws.session()

            async def grep() -> int:
                result = await session.call("grep", {"pattern": RARE})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0

            async def glob() -> int:
                result = await session.call("glob", {"pattern": "**/*.py"})
                assert not result.is_error, result.text
                return int(result.value["total"]) if result.value else 0

            async def sync(step: Callable[[], int]) -> int:
                return step()

            steps: dict[str, Callable[[], Awaitable[int]]] = {
                "grep": grep,
                "reads": lambda: sync(reads),
                "glob": glob,
                "listing": lambda: sync(listing),
            }
            measured: dict[str, dict[str, Any]] = {
                name: {"times": [], "cpu": [], "server_cpu": [], "requests": 0, "found": 0}
                for name in steps
            }
            for step in steps.values():  # warm-up: imports, connections
                await step()
            for _ in range(spec["repeats"]):  # each workload and its floor, alternating
                for name, step in steps.items():
                    into = measured[name]
                    requests, server_cpu = server.requests(), server.cpu_seconds()
                    start, cpu = time.perf_counter(), time.process_time()
                    into["found"] = await step()
                    into["times"].append(time.perf_counter() - start)
                    into["cpu"].append(time.process_time() - cpu)
                    into["server_cpu"].append(server.cpu_seconds() - server_cpu)
                    into["requests"] = server.requests() - requests
        pool.shutdown()
        return {"objects": len(objects), "load": os.getloadavg(), **measured}
    finally:
        server.close()


def main() -> None:
    if sys.argv[1] == "serve-s3":
        serve_s3()
        return
    spec = json.loads(sys.argv[1])
    print(json.dumps(anyio.run(run, spec)))


if __name__ == "__main__":
    main()
