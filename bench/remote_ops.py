"""Round trips of a 1 MB text file through `FsspecFileSystem` on memory:// and loopback S3.

Each round: stat + read_text (what the read tool does), a guarded edit of one line, and a
guarded write of the whole file; beside them the raw fsspec calls (``cat_file`` /
``pipe_file``) as the floor. A ticker task measures how long the event loop was held up
while the provider worked: every backend call runs in a worker thread, so what remains is
the interpreter's GIL switch interval (5 ms) while a worker hashes or decodes. Run:

    .venv/bin/python bench/remote_ops.py --size-mb 1 --repeat 20

S3 is moto's server on 127.0.0.1 (started here, dummy credentials; nothing leaves the host).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from dsh_fs.fs import FsEditRequest, FsVersion, ReplaceIfVersion
from dsh_fs.providers import FsspecFileSystem


def _running_s3_server() -> Any:
    """`tests/s3_server.running_s3_server()`: the loopback server lives with the tests."""
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tests", "s3_server.py")
    spec = importlib.util.spec_from_file_location("s3_server", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.running_s3_server()


LINE = "    result = compute(alpha, beta)  # ünïcödé € — mixed width\n"


def make_text(size: int) -> str:
    text = LINE * (size // len(LINE.encode()) + 1)
    return "MARKER 0\n" + text[: size - 9]


async def timed(op: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """Median milliseconds of `repeat` runs of `op`."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await op()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def bench(fs: FsspecFileSystem, size: int, repeat: int) -> dict[str, float]:
    text = make_text(size)
    target = await fs.resolve("bench/big.txt")
    raw_path = fs.fs._strip_protocol(str(target.target_key))
    created = await fs.write_text(target, text)
    state = _State(version=created.version)

    async def read() -> None:
        info = await fs.stat(target)
        assert info is not None
        await fs.read_text(target)
        state.version = info.version

    async def edit() -> None:
        n = state.n
        request = FsEditRequest(old_string=f"MARKER {n}\n", new_string=f"MARKER {n + 1}\n")
        outcome = await fs.edit_text(target, request, state.version)
        state.version, state.n = outcome.version, n + 1

    async def write() -> None:
        n = state.n
        body = f"MARKER {n + 1}\n" + text[9:]
        outcome = await fs.write_text(target, body, ReplaceIfVersion(state.version))
        state.version, state.n = outcome.version, n + 1

    async def round_trip() -> None:
        await read()
        await edit()
        await write()

    def raw_read() -> None:
        fs.fs.cat_file(raw_path)

    def raw_write() -> None:
        fs.fs.pipe_file(raw_path, text.encode())

    results: dict[str, float] = {}
    lag = _LoopLag()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lag.run)
        results["read (stat+read_text)"] = await timed(read, repeat)
        results["edit (guarded)"] = await timed(edit, repeat)
        results["write (ReplaceIfVersion)"] = await timed(write, repeat)
        results["round trip read+edit+write"] = await timed(round_trip, repeat)
        results["max event-loop lag"] = lag.worst_ms
        tg.cancel_scope.cancel()
    results["raw fsspec cat_file"] = await timed(lambda: anyio.to_thread.run_sync(raw_read), repeat)
    results["raw fsspec pipe_file"] = await timed(
        lambda: anyio.to_thread.run_sync(raw_write), repeat
    )
    return results


@dataclass
class _State:
    version: FsVersion
    n: int = 0


class _LoopLag:
    """Worst delay of a 1 ms ticker: how long anything held the event loop."""

    def __init__(self) -> None:
        self.worst_ms = 0.0

    async def run(self) -> None:
        while True:
            start = time.perf_counter()
            await anyio.sleep(0.001)
            self.worst_ms = max(self.worst_ms, (time.perf_counter() - start) * 1000 - 1)


async def run(size: int, repeat: int) -> None:
    rows: list[tuple[str, dict[str, float]]] = []
    memory = FsspecFileSystem.from_url(f"memory://bench-{uuid.uuid4().hex}")
    rows.append(("memory://", await bench(memory, size, repeat)))
    with _running_s3_server() as server:
        bucket = server.new_bucket()
        s3 = FsspecFileSystem.from_url(f"s3://{bucket}/ws", **server.storage_options())
        rows.append(("s3 (moto, loopback)", await bench(s3, size, repeat)))
    names = list(rows[0][1])
    print(f"{size / 1e6:.1f} MB file, median of {repeat} runs, milliseconds")
    print(f"| {'operation':30} | " + " | ".join(f"{label:>20}" for label, _ in rows) + " |")
    print(f"|{'-' * 32}|" + "|".join("-" * 22 for _ in rows) + "|")
    for name in names:
        cells = " | ".join(f"{values[name]:>20.2f}" for _, values in rows)
        print(f"| {name:30} | {cells} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    anyio.run(run, int(args.size_mb * 1_000_000), args.repeat)


if __name__ == "__main__":
    main()
