"""The publication steps alone, in raw Python: what the staging directory and an unnamed
``O_TMPFILE`` file cost next to the durable rename baseline (write, fsync, rename, fsync the
directory), interleaved.

Run: ``.venv/bin/python -m bench.publication [rounds] [directory]`` (default 100 rounds of
1 MiB in bench/data). Linux only (``O_TMPFILE`` through ``/proc/self/fd``).
"""

from __future__ import annotations

import os
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

DATA = os.urandom(1 << 20)
TARGET = "publication-bench.txt"


def rename_baseline(dir_fd: int) -> None:
    fd = os.open(".bench-tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
    os.write(fd, DATA)
    os.fsync(fd)
    os.close(fd)
    os.replace(".bench-tmp", TARGET, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)


def staging_directory(dir_fd: int) -> None:
    stage = f".bench-stage-{secrets.token_hex(6)}"
    os.mkdir(stage, 0o700, dir_fd=dir_fd)
    stage_fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dir_fd)
    fd = os.open("content", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=stage_fd)
    os.write(fd, DATA)
    os.fchmod(fd, 0o644)
    os.fsync(fd)
    os.replace("content", TARGET, src_dir_fd=stage_fd, dst_dir_fd=dir_fd)
    os.rmdir(stage, dir_fd=dir_fd)
    os.fsync(dir_fd)
    os.close(fd)
    os.close(stage_fd)


def unnamed_file(dir_fd: int) -> None:
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    os.write(fd, DATA)
    os.fchmod(fd, 0o644)
    os.fsync(fd)
    name = f".bench-link-{secrets.token_hex(6)}"
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
    os.replace(name, TARGET, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)
    os.close(fd)


def main(argv: list[str] | None = None) -> None:
    """Print the median of each way over the rounds."""
    args = sys.argv[1:] if argv is None else argv
    rounds = int(args[0]) if args else 100
    directory = Path(args[1]) if len(args) > 1 else Path(__file__).parent / "data"
    directory.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    ways: list[Callable[[int], None]] = [rename_baseline, staging_directory, unnamed_file]
    times: dict[str, list[float]] = {way.__name__: [] for way in ways}
    try:
        for _ in range(rounds):
            for way in ways:
                start = time.perf_counter()
                way(dir_fd)
                times[way.__name__].append(time.perf_counter() - start)
        os.unlink(TARGET, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    for name, samples in times.items():
        print(f"{name:<20} {statistics.median(samples) * 1e3:7.2f} ms (median of {rounds})")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
