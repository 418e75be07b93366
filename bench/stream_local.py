"""Stream a large file through `LocalFileSystem.stream_text` vs a raw read-and-decode loop.

Each measurement runs in a fresh child process so its peak RSS is its own. Run:

    .venv/bin/python bench/stream_local.py --size-mb 1024 --repeat 3

The file is generated once (ASCII lines with multibyte characters mixed in) and reused.
"""

from __future__ import annotations

import argparse
import codecs
import os
import resource
import subprocess
import sys
import time

LINE = "    result = compute(alpha, beta)  # ünïcödé € 😀 — mixed width\n".encode()


def make_file(path: str, size: int) -> None:
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    block = LINE * (4 * 1024 * 1024 // len(LINE))
    with open(path, "wb") as out:
        while size - out.tell() >= len(block):
            out.write(block)
        tail = size - out.tell()
        whole_lines = LINE * (tail // len(LINE))
        out.write(whole_lines + b"\n" * (tail - len(whole_lines)))


def run_raw(path: str, chunk_size: int) -> int:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    chars = 0
    with open(path, "rb", buffering=0) as source:
        while chunk := source.read(chunk_size):
            if b"\0" in chunk:
                raise ValueError("binary")
            chars += len(decoder.decode(chunk))
    chars += len(decoder.decode(b"", True))
    return chars


def run_stream(path: str, chunk_size: int) -> int:
    import anyio

    from dsh_fs.providers.local import _filesystem as _local
    from dsh_fs.providers.local._filesystem import LocalFileSystem

    _local.STREAM_CHUNK_SIZE = chunk_size

    async def stream() -> int:
        fs = LocalFileSystem()
        chars = 0
        async with fs.stream_text(await fs.resolve(path)) as chunks:
            async for chunk in chunks:
                chars += len(chunk)
        return chars

    return anyio.run(stream)


def child(mode: str, path: str, chunk_size: int) -> None:
    start = time.perf_counter()
    chars = (run_stream if mode == "stream" else run_raw)(path, chunk_size)
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{elapsed:.3f} {peak_kib} {chars}")


def measure(mode: str, path: str, chunk_size: int) -> tuple[float, int, int]:
    output = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--path", path, "--chunk", str(chunk_size)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(output[0]), int(output[1]), int(output[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--path", default=os.path.join("/tmp", "dsh-fs-bench-stream.txt"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--chunks", default="1,4,16", help="chunk sizes in MiB (fractions allowed) to compare"
    )
    parser.add_argument("--child", choices=["raw", "stream"])
    parser.add_argument("--chunk", type=int, default=4 * 1024 * 1024)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.path, args.chunk)
        return

    size = args.size_mb * 1024 * 1024
    make_file(args.path, size)
    print(f"file: {args.path} ({size / 1e9:.2f} GB); warm page cache; best of {args.repeat}")
    print(f"{'mode':<8}{'chunk':>8}{'seconds':>10}{'GB/s':>8}{'peak RSS MiB':>14}")
    measure("raw", args.path, 4 << 20)  # warm the page cache
    for mib in (float(x) for x in args.chunks.split(",")):
        for mode in ("raw", "stream"):
            runs = [measure(mode, args.path, int(mib * 2**20)) for _ in range(args.repeat)]
            best = min(runs)
            peak = max(run[1] for run in runs)
            assert len({run[2] for run in runs}) == 1
            print(
                f"{mode:<8}{mib:>6g}Mi{best[0]:>10.3f}{size / best[0] / 1e9:>8.2f}"
                f"{peak / 1024:>14.1f}"
            )


if __name__ == "__main__":
    main()
