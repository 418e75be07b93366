"""Where a journaled 1 MB write or edit spends its time, beside the row that measures it
(issues 36 and 44): the calls with and without the journal interleaved as in
`bench/journal.py` (a sandbox workspace, the store on the same filesystem, `os.sync()` before
each call, one warm-up call a side), and for each side the medians of the call's wall time
and CPU time, then the CPU time per call of each thread of the process (from the kernel's
``/proc/self/task/<tid>/schedstat``, in nanoseconds): the caller's event loop, the worker
thread that runs the provider's critical section, and the journal's helper threads.

The worker thread and the event loop are the call's path; the journal's helper threads run
beside it (the pending record, its fsync and the record's line counts, delta and digest while
the content is written and made durable): on a machine with a free core their CPU time costs
no wall time, on a loaded one it does. Run:

    .venv/bin/python -m bench.journal_cost [--calls 60] [--dir DIR]

(``--dir /dev/shm`` for a filesystem whose fsync costs nothing: the calls are then CPU-bound
and the wall times show what the CPU times cost on the call's path.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Session, Workspace
from dsh_fs.journal import JournalConfig

from .journal import _text

SIZE = 1_000_000


def _cpu_by_thread() -> dict[int, int]:
    """Nanoseconds on a CPU of each thread of this process, by native id."""
    out: dict[int, int] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as stat:
                out[int(tid)] = int(stat.read().split()[0])
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return out


def _thread_names() -> dict[int, str]:
    """A name for each live thread: its Python name without a pool's index
    (``dsh-fs-journal-record``: the pending record, the pre-image, and the record's line
    counts, delta and digest; ``-sync``: the record's fsync, and closing it after the
    commit)."""
    return {
        thread.native_id: thread.name.rsplit("_", 1)[0]
        for thread in threading.enumerate()
        if thread.native_id is not None
    }


async def _side(session: Session, tool: str, calls: int, content: str) -> dict[str, Any]:
    """`calls` measured calls of `tool` (after one warm-up): medians and CPU per thread."""

    def arguments(n: int) -> dict[str, Any]:
        if tool == "edit":
            return {
                "file_path": "f.txt",
                "old_string": f"MARKER {n}",
                "new_string": f"MARKER {n + 1}",
            }
        return {"file_path": "f.txt", "content": content + ("" if n % 2 else "# v2\n")}

    walls, cpus = [], []
    before: dict[int, int] = {}
    for n in range(calls + 1):
        os.sync()
        if n == 1:
            before = _cpu_by_thread()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = await session.call(tool, arguments(n))
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        assert not result.is_error, result.text
        if n:
            walls.append(wall)
            cpus.append(cpu)
    after, names = _cpu_by_thread(), _thread_names()
    threads: Counter[str] = Counter()
    for tid, used in after.items():
        threads[names.get(tid, "ended")] += used - before.get(tid, 0)
    return {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "threads": {name: used / calls / 1e9 for name, used in threads.items()},
    }


async def main(calls: int, directory: str) -> None:
    content = _text(SIZE)
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        base = Path(tmp)
        for tool in ("write", "edit"):
            sides: dict[str, dict[str, Any]] = {}
            # One side at a time here (the per-thread accounting needs a process of its
            # own per side): the sides of `bench/journal.py`'s rows alternate call by call.
            for journaled in (False, True):
                root = base / f"{tool}-{journaled}"
                root.mkdir()
                (root / "f.txt").write_text(content)
                store = JournalConfig(location=str(base / f"store-{tool}"), max_bytes=8 << 30)
                async with Workspace.sandbox(root, journal=store if journaled else None) as ws:
                    session = ws.session(label="bench")
                    await session.call("read", {"file_path": "f.txt", "limit": 1})
                    side = "journaled" if journaled else "plain"
                    sides[side] = await _side(session, tool, calls, content)
            plain, journaled_side = sides["plain"], sides["journaled"]
            walls = (journaled_side["wall"] * 1e3, plain["wall"] * 1e3)
            cpus = (journaled_side["cpu"] * 1e3, plain["cpu"] * 1e3)
            print(
                f"{tool} 1 MB: wall {walls[0]:.2f} / {walls[1]:.2f} ms "
                f"({walls[0] / walls[1]:.2f}x), CPU {cpus[0]:.2f} / {cpus[1]:.2f} ms "
                f"({cpus[0] / cpus[1]:.2f}x)"
            )
            for side, measured in sides.items():
                shown = ", ".join(
                    f"{name} {used * 1e3:.3f}"
                    for name, used in sorted(measured["threads"].items(), key=lambda i: -i[1])
                    if used * 1e3 >= 0.005
                )
                print(f"    {side}: CPU ms a call by thread: {shown}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--dir", default=".")
    args = parser.parse_args()
    anyio.run(main, args.calls, args.dir)
