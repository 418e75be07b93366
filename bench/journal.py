"""The change journal's cost (issue 23): a journaled edit and write of 1 MB and 100 MB against
the same call without the journal (target <= 1.1x), an undo of a 100 MB edit against the
edit (<= 1.5x), and the peak memory journaling adds to a 100 MB edit (<= 16 MiB). Run:

    .venv/bin/python bench/journal.py [--sizes 1,100] [--repeat 5]

Each call goes through a sandbox workspace's tools on a real disk, the store on the same
filesystem (so the pre-image is a hard link). The calls with and without the journal
alternate (which goes first alternates too) and each starts with the replaced file on disk
(`os.sync()`), so a slow moment of the disk falls on both sides alike; each side's first call
of a tool is a warm-up, not measured (the journal's helper threads start there); the 1 MB rows
take at least 21 calls a side. Each row shows the CPU time's ratio beside the wall time's
(every thread of the process: on a shared machine the wall time carries the disk's and the
other processes' moments). The undo row is the median of undoing every measured edit, newest
first, in the workspace that made them. Prints ratio, target, met / not met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Session, Workspace
from dsh_fs.fs import forward_delta, line_counts
from dsh_fs.journal import JournalConfig

LINE = "    result = compute(alpha, beta)  # a line of code\n"


def _text(size: int) -> str:
    return "MARKER 0\n" + (LINE * (size // len(LINE) + 1))[: size - 9]


Samples = dict[bool, tuple[list[float], list[float]]]
"""{journaled: (wall seconds, CPU seconds)} of each measured call."""


async def _calls(sessions: dict[bool, Session], size: int, repeat: int) -> tuple[Samples, Samples]:
    """Writes then edits of each side's file, the two sides interleaved call by call (the
    side going first alternates), so the disk's slow moments fall on both alike; returns
    the samples of the writes and of the edits."""
    content = _text(size)
    writes = await _interleaved(
        sessions, repeat, "write", lambda n: {"file_path": "f.txt", "content": content}
    )
    edits = await _interleaved(
        sessions,
        repeat,
        "edit",
        lambda n: {
            "file_path": "f.txt",
            "old_string": f"MARKER {n}",
            "new_string": f"MARKER {n + 1}",
        },
    )
    return writes, edits


async def _interleaved(
    sessions: dict[bool, Session],
    repeat: int,
    tool: str,
    arguments: Callable[[int], dict[str, Any]],
) -> Samples:
    """`repeat` calls of `tool` on each side (the `n`th with `arguments(n)`), alternating
    side by side, after one warm-up call a side (not measured)."""
    times: Samples = {False: ([], []), True: ([], [])}
    for n in range(repeat + 1):
        for journaled in (n % 2 == 1, n % 2 == 0):
            # The replaced file is on disk before each call, as a file an agent changes
            # usually is: else the call without the journal drops the previous call's dirty
            # pages unwritten, while the journal must make them durable (the pre-image).
            os.sync()
            start, start_cpu = time.perf_counter(), time.process_time()
            result = await sessions[journaled].call(tool, arguments(n))
            wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
            assert not result.is_error, result.text
            if n:
                times[journaled][0].append(wall)
                times[journaled][1].append(cpu)
    return times


async def _undos(ws: Workspace) -> list[float]:
    """Each journaled edit undone by the workspace that made it, newest first, as the
    library's roll-back loop does (each restores the whole file from its pre-image, guarded
    by the version the newer undo published: seen within its own clock tick, so the guard
    compares the file's bytes), the replaced file on disk before each."""
    assert ws.journal is not None
    times = []
    for entry in [e for e in await ws.journal.entries() if e.tool == "edit"]:
        os.sync()
        start = time.perf_counter()
        (result,) = await ws.journal.undo(ids=[entry.id])
        times.append(time.perf_counter() - start)
        assert result.result == "undone", result.reason
    return times


def _row(
    name: str,
    measured: float,
    baseline: float,
    target: float,
    cpu: tuple[float, float] | None = None,
) -> str:
    """`name`'s ratio `measured` / `baseline` (medians, seconds), both shown (with the CPU
    times' ratio when `cpu` gives their medians), and whether it meets `target`."""
    ratio = measured / baseline
    met = "met" if ratio <= target else "not met"
    shown = f"{ratio:.2f}x ({measured * 1000:.1f} / {baseline * 1000:.1f} ms"
    if cpu is not None:
        shown += f"; CPU {cpu[0] / cpu[1]:.2f}x, {cpu[0] * 1000:.2f} / {cpu[1] * 1000:.2f} ms"
    return f"| {name} | {shown}) | <= {target}x | {met} |"


def _medians(samples: Samples) -> tuple[float, float, tuple[float, float]]:
    """The journaled and plain wall medians, and the (journaled, plain) CPU medians."""
    wall = [statistics.median(samples[j][0]) for j in (True, False)]
    cpu = [statistics.median(samples[j][1]) for j in (True, False)]
    return wall[0], wall[1], (cpu[0], cpu[1])


async def journal_rows(sizes: list[int], repeat: int) -> list[str]:
    """The table's rows (a header, then one per measure, with its target and met / not
    met); `make bench` prints them in its run."""
    rows = ["| measure | ratio (medians) | target | |", "|---|---|---|---|"]
    for mb in sizes:
        size = mb * 1_000_000
        with tempfile.TemporaryDirectory(dir=".") as tmp:
            base = Path(tmp)
            spaces: dict[bool, Workspace] = {}
            sessions: dict[bool, Session] = {}
            for journaled in (False, True):
                root = base / ("journaled" if journaled else "plain")
                root.mkdir()
                (root / "f.txt").write_text(_text(size))
                # Bounds far above what the run keeps (ten 100 MB pre-images): a pruned
                # pre-image would leave the undo row nothing to undo.
                journal = JournalConfig(location=str(base / "store"), max_bytes=8 << 30)
                ws = Workspace.sandbox(root, journal=journal if journaled else None)
                spaces[journaled], sessions[journaled] = ws, ws.session(label="bench")
                await sessions[journaled].call("read", {"file_path": "f.txt", "limit": 1})
            calls = repeat if mb >= 100 else max(repeat, 21)
            writes, edits = await _calls(sessions, size, calls)
            journaled_edit, plain_edit, edit_cpu = _medians(edits)
            rows.append(_row(f"journaled edit, {mb} MB", journaled_edit, plain_edit, 1.1, edit_cpu))
            journaled_write, plain_write, write_cpu = _medians(writes)
            rows.append(
                _row(f"journaled write, {mb} MB", journaled_write, plain_write, 1.1, write_cpu)
            )
            if mb >= 100:
                undo = statistics.median(await _undos(spaces[True]))
                rows.append(
                    _row(
                        f"undo of a {mb} MB edit vs the journaled edit (median of {repeat}; "
                        f"{undo / plain_edit:.2f}x the edit without the journal)",
                        undo,
                        journaled_edit,
                        1.5,
                    )
                )
            for ws in spaces.values():
                await ws.aclose()
            if mb >= 100:
                for journaled in (False, True):
                    root = base / ("m-j" if journaled else "m-p")
                    root.mkdir()
                    (root / "f.txt").write_text(_text(size))
                    mws = Workspace.sandbox(root, journal=(base / "mstore") if journaled else None)
                    s = mws.session()
                    await s.call("read", {"file_path": "f.txt", "limit": 1})
                    tracemalloc.start()
                    await s.call(
                        "edit",
                        {"file_path": "f.txt", "old_string": "MARKER 0", "new_string": "MARKER 1"},
                    )
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    await mws.aclose()
                    if not journaled:
                        plain_peak = peak
                extra = (peak - plain_peak) / (1 << 20)
                met = "met" if extra <= 16 else "not met"
                rows.append(
                    f"| peak memory journaling a {mb} MB edit | +{extra:.1f} MiB "
                    f"| <= 16 MiB | {met} |"
                )
    return rows + line_count_rows(repeat)


def line_count_rows(repeat: int) -> list[str]:
    """What a commit spends on the line counts and the forward delta of a 10 MB change
    (SPEC §9.1: linear; issue 36: <= 50 ms): a one-line edit of a 10 MB file, and a rewrite
    of every tenth line of it (no shared ends to trim: every line is hashed). Medians of
    `repeat` runs of `line_counts` then `forward_delta`, as the store's commit calls them
    (their CPU time: the wall time on a loaded machine is mostly other processes')."""
    before = "".join(f"    value_{n} = compute(alpha, {n})\n" for n in range(300_000)).encode()
    before = before[: 10 * 1_000_000]
    before = before[: before.rfind(b"\n") + 1]
    cases = {
        "a one-line edit": before.replace(b"value_150000 ", b"value_150000_x ", 1),
        "every tenth line rewritten": before.replace(b"0 = compute", b"0 = recompute"),
    }
    rows = []
    for name, after in cases.items():
        times, cpu = [], []
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            line_counts(before, after)
            forward_delta(before, after)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        # The CPU time is what the counting costs; on a shared machine the wall time adds
        # the other processes' turns (both shown, the target judged on the CPU time).
        median, median_cpu = statistics.median(times), statistics.median(cpu)
        met = "met" if median_cpu <= 0.05 else "not met"
        rows.append(
            f"| line counts and forward delta of a 10 MB change, {name} "
            f"| {median_cpu * 1000:.1f} ms CPU ({median * 1000:.1f} ms wall) | <= 50 ms | {met} |"
        )
    return rows


async def main(sizes: list[int], repeat: int) -> None:
    print("\n".join(await journal_rows(sizes, repeat)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,100")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, [int(s) for s in args.sizes.split(",")], args.repeat)
