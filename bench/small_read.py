"""Small-read overhead: a 10-line read through `Session.call` vs the raw Python baseline.

Run: ``.venv/bin/python -m bench.small_read [calls]``. Prints calls/second and µs/call for
the tool path, the provider primitives it uses, and the baseline (open, read, split, format).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from dsh_fs import Workspace
from dsh_fs.fs import FS


def _baseline(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    return "\n".join(f"{n}: {line}" for n, line in enumerate(lines, 1))


async def _time_async(calls: int, call: Callable[[], Awaitable[object]]) -> float:
    for _ in range(min(calls, 200)):
        await call()
    start = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - start) / calls


def _report(label: str, seconds: float) -> None:
    print(f"{label:<34} {seconds * 1e6:8.1f} µs/call {1 / seconds:10.0f} calls/s")


async def _run(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.py"
        path.write_text("".join(f"line {n} = {n * n}\n" for n in range(10)), encoding="utf-8")
        async with Workspace.local(tmp) as workspace:
            session = workspace.session()
            arguments = {"file_path": "small.py"}
            result = await session.call("read", arguments)
            assert not result.is_error, result.text
            fs = workspace.context.get(FS)
            target = await fs.resolve("small.py", tmp)
            tool = workspace.context.tools.get("read")
            assert tool is not None

            async def stream() -> None:
                async with fs.stream_text(target) as chunks:
                    async for _ in chunks:
                        pass

            async def parse() -> None:
                tool.parse_arguments(arguments)

            rows = [
                ("session.call('read') 10 lines", lambda: session.call("read", arguments)),
                ("  parse_arguments", parse),
                ("  fs.resolve", lambda: fs.resolve("small.py", tmp)),
                ("  fs.stat", lambda: fs.stat(target)),
                ("  fs.read_small (stat+read)", lambda: fs.read_small(target, 64 * 1024)),
                ("  fs.stream_text (open+read+close)", stream),
                ("  fs.read_text", lambda: fs.read_text(target)),
            ]
            for label, call in rows:
                _report(label, await _time_async(calls, call))
            start = time.perf_counter()
            for _ in range(calls):
                _baseline(path)
            _report("baseline open/read/split/format", (time.perf_counter() - start) / calls)


def main(argv: list[str] | None = None) -> None:
    """Run the measurement (``calls`` per row, default 5000)."""
    args = sys.argv[1:] if argv is None else argv
    anyio.run(_run, int(args[0]) if args else 5000)


if __name__ == "__main__":
    main()
