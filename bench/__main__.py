"""`make bench`: run every workload through dsh-fs and through its raw baseline, print the table.

Usage: ``python -m bench [--quick] [--peers] [--sizes 1MB,100MB,1GB] [--out bench/results.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._data import SIZES, ensure_file, small_file
from bench._mcp import dsh_fs_server, time_calls
from bench._peers import peer_rows, render_peers

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One line of the results table."""

    workload: str
    ours: dict[str, Any]
    baseline: dict[str, Any] | None
    target: str
    per_call: int = 1
    dirsync: dict[str, Any] | None = None
    """The baseline plus an fsync of the directory after the rename (what SPEC requires)."""


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one workload in a fresh interpreter and return its JSON measurements."""
    out = subprocess.run(
        [sys.executable, "-m", "bench._child", json.dumps(spec)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if out.returncode != 0:
        raise SystemExit(f"workload {spec} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


ROUNDS = 3
"""Each side of a comparison runs in this many alternating children (dsh-fs, baseline,
dsh-fs, …), their samples pooled: disk latency drifts over a run on a VM (an fsync's
median moved 30% between back-to-back runs), and alternating puts the drift on both sides."""


def interleaved(spec: dict[str, Any], impls: list[str]) -> list[dict[str, Any]]:
    """Run `spec` for every impl in `impls`, alternating children over `ROUNDS` rounds."""
    per_round = max(1, spec["repeats"] // ROUNDS)
    pooled: list[dict[str, Any]] = [{"times": [], "rss_kib": 0} for _ in impls]
    for _ in range(ROUNDS):
        for impl, into in zip(impls, pooled, strict=True):
            result = child({**spec, "impl": impl, "repeats": per_round})
            into["times"].extend(result["times"])
            into["rss_kib"] = max(into["rss_kib"], result["rss_kib"])
    return pooled


def pair(spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """dsh-fs and the baseline, on the same spec, interleaved."""
    ours, base = interleaved(spec, ["dsh-fs", "baseline"])
    return ours, base


def line_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def _rss(measured: dict[str, Any] | None) -> str:
    if measured is None or measured.get("rss_kib") is None:
        return "–"
    return f"{measured['rss_kib'] / 1024:.1f} MiB"


def render(rows: list[Row]) -> str:
    head = (
        "| workload | dsh-fs median | dsh-fs min | baseline median | ratio | "
        "ratio vs baseline+dirsync | peak RSS growth (dsh-fs / baseline) | target |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for row in rows:
        ours = statistics.median(row.ours["times"]) / row.per_call
        ours_min = min(row.ours["times"]) / row.per_call
        if row.baseline is not None:
            base = statistics.median(row.baseline["times"]) / row.per_call
            base_s, ratio = fmt_time(base), f"{ours / base:.2f}×"
        else:
            base_s, ratio = "–", "–"
        if row.dirsync is not None:
            synced = statistics.median(row.dirsync["times"]) / row.per_call
            vs_sync = f"{ours / synced:.2f}× ({fmt_time(synced)})"
        else:
            vs_sync = "–"
        rss = f"{_rss(row.ours)} / {_rss(row.baseline)}"
        if "p99" in row.ours:
            base_s = f"p50 {fmt_time(row.ours['p50'])}"
            ratio = f"p99 {fmt_time(row.ours['p99'])}"
        lines.append(
            f"| {row.workload} | {fmt_time(ours)} | {fmt_time(ours_min)} | {base_s} | {ratio} "
            f"| {vs_sync} | {rss} | {row.target} |"
        )
    return head + "\n".join(lines) + "\n"


def edit_recovery_rows(path: Path, label: str, repeats: int) -> list[Row]:
    """An edit near-miss through the tool against read-and-count, and the diagnosis alone
    (the slowest of `bench.edit_diagnosis.MISSES`), SPEC §8.2."""
    ours, base = pair({"workload": "edit-miss", "path": str(path), "repeats": repeats * 2})
    diagnosis = child(
        {"workload": "diagnosis", "impl": "dsh-fs", "path": str(path), "repeats": repeats}
    )
    bounded = "≤ 50 ms" if label == "1MB" else "bounded (skipped, says so)"
    rows = [
        Row(workload=f"edit near-miss (diagnosed), {label}", ours=ours, baseline=base, target=""),
        Row(
            workload=f"diagnosis alone, {label}, slowest kind: {diagnosis['kind']}",
            ours=diagnosis,
            baseline=None,
            target=bounded,
        ),
    ]
    for row in rows:
        print(render([row]).splitlines()[-1], flush=True)
    return rows


def mcp_round_trip(small: Path, calls: int) -> dict[str, Any]:
    """A small read over ``python -m dsh_fs mcp``'s stdio, per call (raw JSON-RPC client)."""
    server = dsh_fs_server(small.parent)
    try:
        times = time_calls(calls, lambda i: server.call("read", {"file_path": str(small)}))
    finally:
        server.close()
    return {"times": times, "rss_kib": None}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--sizes", default="1MB,100MB,1GB", help="comma-separated file sizes")
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also run OpenHands ACI and the MCP reference server (installed into bench/.peers)",
    )
    args = parser.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown size(s) {unknown}; choose from {list(SIZES)}")
    scale = 1 if args.quick else 3
    rows: list[Row] = []
    started = time.perf_counter()

    for label in sizes:
        path = ensure_file(label)
        total = line_count(path)
        repeats = {"1MB": 10, "100MB": 3, "1GB": 2}[label] * scale
        for where, offset in (("start", 1), ("middle", total // 2), ("end", max(1, total - 1999))):
            spec = {"workload": "read", "path": str(path), "offset": offset, "repeats": repeats}
            ours, base = pair(spec)
            target = (
                "≤ 1.25×, RSS ≤ 64 MiB" if label == "1GB" else ("≤ 2×" if label == "1MB" else "")
            )
            rows.append(
                Row(
                    workload=f"read 2000 lines, {label}, {where}",
                    ours=ours,
                    baseline=base,
                    target=target,
                )
            )
            print(render(rows[-1:]).splitlines()[-1], flush=True)
        if label in ("1MB", "100MB"):
            spec = {"workload": "edit", "path": str(path), "repeats": repeats * 2}
            ours, base, synced = interleaved(spec, ["dsh-fs", "baseline", "baseline+dirsync"])
            target = "≤ 1.5×" if label == "1MB" else "≤ 1.3×"
            rows.append(
                Row(
                    workload=f"edit one line, {label}",
                    ours=ours,
                    baseline=base,
                    dirsync=synced,
                    target=f"{target}, RSS ≤ 4× file",
                )
            )
            print(render(rows[-1:]).splitlines()[-1], flush=True)
        if label in ("1MB", "100MB"):
            rows.extend(edit_recovery_rows(path, label, repeats))
        if label == "1MB":
            spec = {"workload": "write", "path": str(path), "repeats": repeats * 2}
            ours, base, synced = interleaved(spec, ["dsh-fs", "baseline", "baseline+dirsync"])
            rows.append(
                Row(
                    workload="write (replace) 1 MB",
                    ours=ours,
                    baseline=base,
                    dirsync=synced,
                    target="≤ 1.5×",
                )
            )
            print(render(rows[-1:]).splitlines()[-1], flush=True)

    small = small_file()
    batch = 1000
    spec = {"workload": "small-read", "path": str(small), "repeats": 5 * scale, "batch": batch}
    ours, base = pair(spec)
    rows.append(
        Row(
            workload="read a 10-line file (per call)",
            ours=ours,
            baseline=base,
            target="≤ 150 µs, ≤ 10×",
            per_call=batch,
        )
    )
    print(render(rows[-1:]).splitlines()[-1], flush=True)

    rows.append(
        Row(
            workload="read a 10-line file over MCP stdio (round trip)",
            ours=mcp_round_trip(small, 500 * scale),
            baseline=None,
            target="faster than the MCP reference server (`--peers`)",
        )
    )
    print(render(rows[-1:]).splitlines()[-1], flush=True)

    if "1GB" in sizes:
        big = ensure_file("1GB")
        spec = {
            "workload": "responsiveness",
            "impl": "dsh-fs",
            "path": str(small),
            "big_path": str(big),
            "offset": line_count(big) // 2,
            "repeats": scale,
        }
        rows.append(
            Row(
                workload="small read while a 1 GB read streams",
                ours=child(spec),
                baseline=None,
                target="p99 ≤ 50 ms",
            )
        )
        print(render(rows[-1:]).splitlines()[-1], flush=True)

    peers = ""
    if args.peers:
        source = ensure_file("1MB")
        peers = (
            "\n## Side by side with peers (1 MB file, same raw JSON-RPC client for both MCP "
            "servers)\n\n"
            + render_peers(peer_rows(small, source, line_count(source), quick=args.quick))
        )
        print(peers, flush=True)

    table = render(rows)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    report = (
        f"# dsh-fs benchmark\n\nMachine: {machine()}.\n"
        f"Run: `python -m bench {' '.join(argv if argv is not None else sys.argv[1:])}`"
        f" ({'quick' if args.quick else 'full'}), "
        f"{time.perf_counter() - started:.0f} s, load average at the end {load}. "
        "Ratios compare medians taken in this run.\n\n" + table + peers
    )
    out = Path(args.out)
    Path(args.out).write_text(report + kept_history(out), encoding="utf-8")
    print(f"\n{report}\nwritten to {args.out}")
    return 0


HISTORY = "\n## Measurements behind design choices\n"


def kept_history(out: Path) -> str:
    """The hand-kept history section of the previous results file (from `HISTORY` on): the
    numbers behind past design decisions, which a new run does not re-measure."""
    try:
        previous = out.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    start = previous.find(HISTORY)
    return "" if start == -1 else previous[start:]


if __name__ == "__main__":
    raise SystemExit(main())
