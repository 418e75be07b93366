"""A first read of a 1 GB file in a process that has already read large files, as a server
has: CPU time and page faults per stream chunk size, beside the raw baseline.

The bench's cold rows run each read in a fresh child, where glibc's allocator has not yet
settled; a long-lived process is where a chunk's fresh string costs fresh pages. Each round
here reads the middle window once with the baseline and once per chunk size, in one
process, a new workspace each time (no line index serves a read). Run:

    .venv/bin/python -m bench.warm_scan [rounds] [file]

The file is the bench's 1 GB one (mostly ASCII, some two-byte-wide characters) unless one
is given: its text decides how wide each chunk's string is (1, 2 or 4 bytes a character).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

import anyio

import dsh_fs.providers.local._filesystem as local_filesystem
from bench.__main__ import line_count
from bench._baselines import read_window
from bench._data import ensure_file
from dsh_fs import Workspace

CHUNK_SIZES = (1024 * 1024, 512 * 1024, 256 * 1024, 128 * 1024)
"""The chunk size before issue 27's change (1 MiB), the one chosen (256 KiB) and its
neighbours."""


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


async def _ours(path: Path, offset: int, chunk_size: int) -> tuple[float, int]:
    local_filesystem.STREAM_CHUNK_SIZE = chunk_size
    async with Workspace.local(str(path.parent)) as workspace:
        session = workspace.session()
        faults, start = _faults(), time.process_time()
        result = await session.call("read", {"file_path": str(path), "offset": offset})
        spent = time.process_time() - start
        assert not result.is_error, result.text
    return spent, _faults() - faults


def _baseline(path: Path, offset: int) -> tuple[float, int]:
    faults, start = _faults(), time.process_time()
    read_window(path, offset)
    return time.process_time() - start, _faults() - faults


async def _run(rounds: int, path: Path) -> None:
    offset = line_count(path) // 2
    measured: dict[str, list[tuple[float, int]]] = {"baseline": []}
    for _ in range(rounds):
        measured["baseline"].append(_baseline(path, offset))
        for size in CHUNK_SIZES:
            measured.setdefault(f"dsh-fs, {size // 1024} KiB chunks", []).append(
                await _ours(path, offset, size)
            )
    base = statistics.median(cpu for cpu, _ in measured["baseline"])
    print("| read | CPU time, median | vs baseline | page faults, median |\n|---|---|---|---|")
    for label, samples in measured.items():
        cpu = statistics.median(cpu for cpu, _ in samples)
        faults = statistics.median(faults for _, faults in samples)
        print(f"| {label} | {cpu:.2f} s | {cpu / base:.2f}× | {faults:,.0f} |")


def main(argv: list[str] | None = None) -> None:
    """Run `rounds` rounds (default 4) on `file` (default the bench's 1 GB file)."""
    args = sys.argv[1:] if argv is None else argv
    rounds = int(args[0]) if args else 4
    path = Path(args[1]) if len(args) > 1 else ensure_file("1GB")
    anyio.run(_run, rounds, path)


if __name__ == "__main__":
    main()
