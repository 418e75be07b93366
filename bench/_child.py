"""One workload, one implementation, in a fresh process: ``python -m bench._child SPEC``.

Prints one JSON object: the per-iteration wall and CPU times in seconds and the peak RSS
growth in KiB (the rise of ``ru_maxrss`` from just before the workload's first call to its
end).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from bench import _baselines, edit_diagnosis
from bench._data import MARKER
from dsh_fs import Workspace

Spec = dict[str, Any]
MARKER_ALT = MARKER.replace("unique line", "edited line")


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def _timed(
    repeats: int,
    step: Callable[[int], Awaitable[None]],
    prepare: Callable[[], None] | None = None,
) -> tuple[list[float], list[float]]:
    """Wall and CPU times (every thread of the process) of each step: on a shared machine,
    waiting for a core inflates the wall time but not the CPU time. `prepare` runs before
    each step, untimed."""
    times, cpu = [], []
    for i in range(1, repeats + 1):
        if prepare is not None:
            prepare()
        start, used = time.perf_counter(), time.process_time()
        await step(i)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return times, cpu


async def _ok(result: Any) -> Any:
    if result.is_error:
        raise RuntimeError(result.text)
    return result


async def run(spec: Spec) -> dict[str, Any]:
    """Run the workload `spec` describes and return its measurements."""
    workload, impl, repeats = spec["workload"], spec["impl"], spec["repeats"]
    if workload == "read-settled":
        return await _read_settled(spec)
    path = Path(spec["path"])
    if workload in ("edit", "write"):
        # Mutating workloads work on a private copy, so the generated data stays pristine.
        work = path.with_name(f"work-{impl}-{path.name}")
        shutil.copyfile(path, work)
        path = work
    # The encodings row (SPEC §12) reads a file a rule declares cp1252.
    encodings = spec.get("encodings")
    # Writes and edits go through the bare tool path (no observation policy), as issue 44
    # measured them: the version checks the policy adds are the reads' business. A spec
    # may say (the small read is measured both ways).
    policy = spec.get("policy", workload not in ("edit", "write"))
    ws = Workspace.local(str(path.parent), encodings=encodings, policy=policy)
    session = ws.session()
    before = _rss_kib()
    extra: dict[str, Any] = {}
    prepare: Callable[[], None] | None = None

    if workload == "read":
        offset = spec["offset"]
        # With `warm_path` (the cold rows: one measured call per process), the warm-up reads
        # that other file, so nothing the measured call could reuse exists before it.
        warm = Path(spec.get("warm_path") or path)
        if impl == "dsh-fs":
            args = {"file_path": str(path), "offset": offset, "limit": 2000}
            warm_args = {"file_path": str(warm), "offset": 1, "limit": 2000}
            # A first read every time: each call gets a workspace whose line index is empty.
            fresh = [
                Workspace.local(str(path.parent), encodings=encodings).session()
                for _ in range(repeats + 1)
            ]

            async def step(i: int) -> None:
                await _ok(await fresh[i].call("read", args if i else warm_args))
        else:

            async def step(i: int) -> None:
                _baselines.read_window(path if i else warm, offset if i else 1)

    elif workload == "edit":
        # With `outside`, another writer replaces the file before each measured edit (not
        # timed): the prior is then never what dsh-fs published last.
        outside = spec.get("outside", False)
        baseline = _baselines.edit_line_text if impl == "baseline-text" else _baselines.edit_line

        async def step(i: int) -> None:
            old, new = (MARKER, MARKER_ALT) if i % 2 == 0 else (MARKER_ALT, MARKER)
            if impl == "dsh-fs":
                args = {"file_path": str(path), "old_string": old, "new_string": new}
                await _ok(await session.call("edit", args))
            else:
                baseline(path, old, new)

        if outside:
            prepare = partial(_touch_outside, path)

    elif workload == "edit-miss":
        # A near-miss through the tool: read, version check, no match, diagnosis, error.
        old, new = edit_diagnosis.edit_near_miss()
        if impl == "dsh-fs":
            await _ok(await session.call("read", {"file_path": str(path), "limit": 1}))
            args = {"file_path": str(path), "old_string": old, "new_string": new}

            async def step(i: int) -> None:
                result = await session.call("edit", args)
                assert result.code == "FS_EDIT_NOT_FOUND", result.text
        else:

            async def step(i: int) -> None:
                assert _baselines.count_matches(path, old) == 0

    elif workload == "diagnosis":
        text = path.read_text(encoding="utf-8")
        start = _rss_kib()
        slowest = max(
            edit_diagnosis.diagnose_each(text, repeats).items(),
            key=lambda item: statistics.median(item[1]),
        )
        await ws.aclose()
        return {"times": slowest[1], "rss_kib": _rss_kib() - start, "kind": slowest[0]}

    elif workload == "write":
        contents = [path.read_text(encoding="utf-8"), path.read_text(encoding="utf-8") + "# v2\n"]
        replace = (
            _baselines.replace_file_fixed if impl == "baseline-fixed" else _baselines.replace_file
        )
        if impl == "dsh-fs":

            async def step(i: int) -> None:
                args = {"file_path": str(path), "content": contents[(i + 1) % 2]}
                await _ok(await session.call("write", args))
        else:

            async def step(i: int) -> None:
                replace(path, contents[(i + 1) % 2])

    elif workload == "small-read":
        batch = spec["batch"]
        args = {"file_path": str(path)}

        async def step(i: int) -> None:
            if impl == "dsh-fs":
                for _ in range(batch):
                    await _ok(await session.call("read", args))
            else:
                for _ in range(batch):
                    _baselines.read_small(path)

    elif workload == "paging":
        offsets: list[int] = spec["offsets"]
        by_offset: dict[str, list[float]] = {str(o): [] for o in offsets}
        await _ok(await session.call("read", {"file_path": str(path), "limit": 2000}))

        async def step(i: int) -> None:
            for offset in offsets:
                args = {"file_path": str(path), "offset": offset, "limit": 2000}
                start = time.perf_counter()
                await _ok(await session.call("read", args))
                by_offset[str(offset)].append(time.perf_counter() - start)

        await step(0)
        for samples in by_offset.values():
            samples.clear()  # the warm-up's
        before = _rss_kib()
        times, cpu = await _timed(repeats, step)
        await ws.aclose()
        return {
            "times": times,
            "cpu": cpu,
            "rss_kib": _rss_kib() - before,
            "by_offset": by_offset,
        }

    elif workload == "responsiveness":
        big = Path(spec["big_path"])
        latencies: list[float] = []
        big_args = {"file_path": str(big), "offset": spec["offset"], "limit": 2000}
        small_args = {"file_path": str(path)}

        async def step(i: int) -> None:
            # A workspace of its own each time: a line index must not shorten the scan.
            reader = Workspace.local(str(big.parent)).session()
            async with anyio.create_task_group() as tg:
                done = anyio.Event()

                async def big_reads() -> None:
                    await _ok(await reader.call("read", big_args))
                    done.set()

                tg.start_soon(big_reads)
                while not done.is_set():
                    start = time.perf_counter()
                    await _ok(await session.call("read", small_args))
                    latencies.append(time.perf_counter() - start)
                    await anyio.sleep(0.001)

        times, cpu = await _timed(repeats, step)
        latencies.sort()
        extra = {
            "p50": statistics.median(latencies),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "samples": len(latencies),
        }
        return {"times": times, "cpu": cpu, "rss_kib": _rss_kib() - before, **extra}
    else:
        raise SystemExit(f"unknown workload {workload!r}")

    await step(0)  # warm-up: imports, page cache, first observation
    times, cpu = await _timed(repeats, step, prepare)
    await ws.aclose()
    return {"times": times, "cpu": cpu, "rss_kib": _rss_kib() - before, **extra}


def _touch_outside(path: Path) -> None:
    """Replace `path` with its own bytes as another process would (a new inode, not synced:
    what an editor's save leaves), outside the timed call."""
    data = path.read_bytes()
    tmp = path.with_name(f".{path.name}.outside")
    tmp.write_bytes(data)
    os.replace(tmp, path)


async def _read_settled(spec: Spec) -> dict[str, Any]:
    """First reads in a process that has already read large files, as a server has: the
    allocator settled by whole reads of `warm_path` (another file) on both sides, then
    dsh-fs and the baseline alternating on `path`, each dsh-fs read in a fresh workspace
    (an empty line index). The baseline's measurements are under ``"baseline"``."""
    path, warm, offset = Path(spec["path"]), Path(spec["warm_path"]), spec["offset"]
    args = {"file_path": str(path), "offset": offset, "limit": 2000}
    for _ in range(2):
        async with Workspace.local(str(warm.parent)) as workspace:
            await _ok(await workspace.session().call("read", {"file_path": str(warm)}))
        _baselines.read_window(warm, 1)
    ours: dict[str, list[float]] = {"times": [], "cpu": []}
    base: dict[str, list[float]] = {"times": [], "cpu": []}
    for _ in range(spec["repeats"]):
        async with Workspace.local(str(path.parent)) as workspace:
            session = workspace.session()
            start, used = time.perf_counter(), time.process_time()
            await _ok(await session.call("read", args))
            ours["times"].append(time.perf_counter() - start)
            ours["cpu"].append(time.process_time() - used)
        start, used = time.perf_counter(), time.process_time()
        _baselines.read_window(path, offset)
        base["times"].append(time.perf_counter() - start)
        base["cpu"].append(time.process_time() - used)
    # One process holds both sides: its peak is not either's, so neither claims it.
    return {**ours, "rss_kib": None, "baseline": {**base, "rss_kib": None}}


def main() -> None:
    spec = json.loads(sys.argv[1])
    print(json.dumps(anyio.run(run, spec)))


if __name__ == "__main__":
    main()
