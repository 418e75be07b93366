"""The change journal's cost on remote storage (issue 23): a journaled edit and write through
`Workspace.remote` against the same calls without the journal, on S3 (moto's server on
loopback, `tests/s3_server.py`) and on fsspec's memory filesystem; then how long `log`
(entries) and an undo of every change take. Run:

    .venv/bin/python -m bench.journal_remote [--size-mib 1] [--repeat 10]

moto serializes requests and answers each in milliseconds, so the ratios show the extra
requests a journaled change makes (a `CopyObject`, two `PutObject`s, a `DeleteObject`), not
what a real S3 region costs.
"""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any

import anyio

from dsh_fs import Workspace


async def _run(
    url: str, journal: bool, options: dict[str, Any], size: int, repeat: int
) -> dict[str, float]:
    async with Workspace.remote(url, journal=journal, **options) as ws:
        s = ws.session(label="bench")
        body = ("x" * 99 + "\n") * (size // 100)
        await s.call("write", {"file_path": "big.txt", "content": "v0\n" + body})
        await s.call("read", {"file_path": "big.txt", "limit": 1})
        start = time.perf_counter()
        for n in range(repeat):
            edit = {"file_path": "big.txt", "old_string": f"v{n}\n", "new_string": f"v{n + 1}\n"}
            assert not (await s.call("edit", edit)).is_error
        out = {"edit": (time.perf_counter() - start) / repeat}
        start = time.perf_counter()
        for n in range(repeat):
            write = {"file_path": "big.txt", "content": f"w{n}\n" + body}
            assert not (await s.call("write", write)).is_error
        out["write"] = (time.perf_counter() - start) / repeat
        if ws.journal is not None:
            start = time.perf_counter()
            out["entries"] = len(await ws.journal.entries())
            out["log"] = time.perf_counter() - start
            start = time.perf_counter()
            results = await ws.journal.undo(session="bench")
            out["undo"] = time.perf_counter() - start
            assert all(r.result == "undone" for r in results)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    from tests.s3_server import shared_server

    server = shared_server()
    size = args.size_mib << 20
    print("| storage | call | without | journaled | ratio |")
    print("|---|---|---|---|---|")
    for kind in ("s3 (moto)", "memory"):
        runs = {}
        for journal in (False, True):
            if kind == "memory":
                url, options = f"memory://bench-{uuid.uuid4().hex}", {}
            else:
                url, options = f"s3://{server.new_bucket()}/ws", server.storage_options()
            runs[journal] = anyio.run(_run, url, journal, options, size, args.repeat)
        for call in ("edit", "write"):
            plain, kept = runs[False][call], runs[True][call]
            print(
                f"| {kind} | {args.size_mib} MiB {call} | {plain * 1000:.1f} ms"
                f" | {kept * 1000:.1f} ms | {kept / plain:.2f}x |"
            )
        journaled = runs[True]
        print(
            f"| {kind} | log of {int(journaled['entries'])} entries | | "
            f"{journaled['log'] * 1000:.0f} ms | |"
        )
        print(f"| {kind} | undo of them all | | {journaled['undo'] * 1000:.0f} ms | |")


if __name__ == "__main__":
    main()
