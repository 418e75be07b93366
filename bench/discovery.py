"""Discovery benchmarks (issue #11): glob, grep and list against ripgrep itself, same run.

Each workload runs in fresh processes (`bench._discovery_child`), dsh-fs and its baseline
alternating, on a generated monorepo-like tree (`bench._monorepo`), warm cache. The baseline
is the ``rg`` binary of the ``ripgrep`` wheel run directly with the flags dsh-fs gives it,
its output read whole by the parent; on S3 (issue 44's rows) moto's server runs in a
process of its own and the floor is a plain boto3 client reading every object with 16
concurrent requests (grep) or one paginated listing (glob), alternating with dsh-fs in one
run; the older S3 row (moto in the measuring process, objects read one by one) is kept.
Run alone with ``python -m bench --discovery`` (``--s3``: the remote rows only, printed).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._monorepo import RARE, REGEX, ensure_flat, ensure_monorepo

__all__ = ["DiscoveryRow", "discovery_rows", "render_discovery", "s3_rows"]

ROOT = Path(__file__).resolve().parent.parent
RSS_LIMIT_KIB = 64 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryRow:
    """One line of the discovery table."""

    workload: str
    ours: dict[str, Any]
    baseline: dict[str, Any] | None
    target: str
    ratio_limit: float | None = None
    """The target as a ratio of the medians (None: no ratio target)."""
    seconds_limit: float | None = None
    """The target as an absolute median time."""
    note: str = ""


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench._discovery_child", json.dumps(spec)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if out.returncode != 0:
        raise SystemExit(f"discovery workload {spec} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _pair(
    spec: dict[str, Any], rounds: int, impls: tuple[str, ...] = ("dsh-fs", "baseline")
) -> list[dict[str, Any]]:
    pooled: list[dict[str, Any]] = [{"times": [], "rss_kib": 0} for _ in impls]
    for _ in range(rounds):
        for impl, into in zip(impls, pooled, strict=True):
            result = _child({**spec, "impl": impl})
            into["times"].extend(result["times"])
            into["rss_kib"] = max(into["rss_kib"], result["rss_kib"])
            for key in ("requests", "found"):
                if key in result:
                    into[key] = result[key]
    return pooled


def discovery_rows(quick: bool = False) -> list[DiscoveryRow]:
    """Run every discovery workload and return its rows (printing each as it lands)."""
    tree = str(ensure_monorepo())
    flat = str(ensure_flat())
    repeats, rounds = (2, 2) if quick else (3, 3)
    rows: list[DiscoveryRow] = []

    def add(row: DiscoveryRow) -> None:
        rows.append(row)
        print(render_discovery([row]).splitlines()[-1], flush=True)

    grep = {"workload": "grep", "root": tree, "repeats": repeats}
    ours, base = _pair({**grep, "pattern": RARE}, rounds)
    add(
        DiscoveryRow(
            workload="grep rare literal, local (rg)",
            ours=ours,
            baseline=base,
            target="≤ 1.2× rg",
            ratio_limit=1.2,
            note=f"{ours.get('found')} matches",
        )
    )
    ours, base = _pair({**grep, "pattern": REGEX}, rounds)
    add(
        DiscoveryRow(
            workload="grep regex, local (rg)",
            ours=ours,
            baseline=base,
            target="≤ 1.2× rg",
            ratio_limit=1.2,
            note=f"{ours.get('found')} matches",
        )
    )
    ours, base = _pair({**grep, "pattern": RARE, "fresh": True}, rounds)
    add(
        DiscoveryRow(
            workload="grep rare literal, local (rg), each the first grep of a fresh workspace",
            ours=ours,
            baseline=base,
            target="≤ 1.2× rg",
            ratio_limit=1.2,
            note=f"{ours.get('found')} matches; the walk of names finds the ignore files (the "
            "rows above reuse its listing, proven by one lstat a directory)",
        )
    )
    ours, base = _pair({**grep, "pattern": RARE, "native": False}, rounds)
    add(
        DiscoveryRow(
            workload="grep rare literal, pure-Python engine (forced)",
            ours=ours,
            baseline=base,
            target="≤ 4× rg",
            ratio_limit=4.0,
            note=f"{ours.get('found')} matches",
        )
    )
    glob = {"workload": "glob", "root": tree, "repeats": repeats}
    ours, base, in_order = _pair(glob, rounds, ("dsh-fs", "baseline", "baseline-sorted"))
    found = f"{ours.get('found')} files"
    add(
        DiscoveryRow(
            workload="glob **/*.py, local (rg), vs `rg --files --sort=modified`",
            ours=ours,
            baseline=in_order,
            target="≤ 1.2× rg --files --sort=modified",
            ratio_limit=1.2,
            note=f"{found}; the listing that orders as glob does (oldest first)",
        )
    )
    add(
        DiscoveryRow(
            workload="glob **/*.py, local (rg), vs unsorted `rg --files`",
            ours=ours,
            baseline=base,
            target="≤ 2× rg --files --glob",
            ratio_limit=2.0,
            note=f"{found}; the same run of dsh-fs as the row above",
        )
    )
    ours, base = _pair({"workload": "list", "root": flat, "repeats": repeats * 2}, rounds)
    add(
        DiscoveryRow(
            workload="list a 100,000-entry directory",
            ours=ours,
            baseline=base,
            target="≤ 300 ms",
            seconds_limit=0.3,
            note="baseline: os.scandir + lstat, sorted",
        )
    )
    for row in s3_rows(repeats):
        add(row)
    s3 = _child({"workload": "s3-grep", "root": tree, "repeats": repeats, "impl": "dsh-fs"})
    add(
        DiscoveryRow(
            workload="grep on S3 (moto in this process, before issue 44), 2,000 objects",
            ours=s3,
            baseline={"times": s3["baseline_times"], "rss_kib": None},
            target="≤ 2 s, requests reported",
            seconds_limit=2.0,
            note=f"{s3['requests']} requests per grep ({s3['objects']} objects), "
            f"{s3.get('found')} match(es); baseline: the same objects listed and read one "
            "by one with boto3, same process and server (nothing searched)",
        )
    )
    return rows


def s3_rows(repeats: int) -> list[DiscoveryRow]:
    """Issue 44's remote rows: grep and glob of 2,000 objects on moto's S3 server in a
    process of its own, against a plain boto3 client (16 concurrent GETs; one recursive
    listing), alternating in one child process."""
    out = _child({"workload": "s3-remote", "root": "", "repeats": repeats, "impl": "dsh-fs"})
    load = "load " + ", ".join(f"{x:.1f}" for x in out["load"])

    def rss(side: dict[str, Any]) -> dict[str, Any]:
        return {**side, "rss_kib": 0}

    def cpu(name: str) -> str:
        side = out[name]
        return (
            f"client CPU {statistics.median(side['cpu']):.2f} s, server CPU "
            f"{statistics.median(side['server_cpu']):.2f} s, {side['requests']} requests"
        )

    return [
        DiscoveryRow(
            workload=f"grep on S3, {out['objects']:,} objects, moto in its own process, "
            "vs boto3 reading them with 16 concurrent requests",
            ours=rss(out["grep"]),
            baseline=rss(out["reads"]),
            target="≤ 1.3× boto3 ×16",
            ratio_limit=1.3,
            note=f"{out['grep']['found']} match(es); dsh-fs {cpu('grep')}; boto3 "
            f"{cpu('reads')}; {load}",
        ),
        DiscoveryRow(
            workload=f"glob **/*.py on S3, {out['objects']:,} objects, moto in its own "
            "process, vs one paginated list_objects_v2",
            ours=rss(out["glob"]),
            baseline=rss(out["listing"]),
            target="≤ 1.2× the listing",
            ratio_limit=1.2,
            note=f"{out['glob']['found']} files; dsh-fs {cpu('glob')}; boto3 "
            f"{cpu('listing')}; {load}",
        ),
    ]


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.1f} ms"


def render_discovery(rows: list[DiscoveryRow]) -> str:
    """The discovery table: medians, ratio, peak RSS growth, target and whether it is met."""
    head = (
        "| workload | dsh-fs median | baseline median | ratio | peak RSS growth "
        "(dsh-fs / baseline) | target | met | note |\n|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for row in rows:
        ours = statistics.median(row.ours["times"])
        base = statistics.median(row.baseline["times"]) if row.baseline else None
        ratio = ours / base if base else None
        met: list[bool] = []
        if row.ratio_limit is not None and ratio is not None:
            met.append(ratio <= row.ratio_limit)
        if row.seconds_limit is not None:
            met.append(ours <= row.seconds_limit)
        rss = row.ours["rss_kib"]
        met.append(rss <= RSS_LIMIT_KIB)
        base_kib = row.baseline.get("rss_kib") if row.baseline else None
        base_rss = f"{base_kib / 1024:.1f}" if base_kib is not None else "–"
        lines.append(
            f"| {row.workload} | {_time(ours)} | {_time(base) if base else '–'} | "
            f"{f'{ratio:.2f}×' if ratio else '–'} | {rss / 1024:.1f} / {base_rss} MiB | "
            f"{row.target}, RSS ≤ 64 MiB | {'yes' if all(met) else 'NO'} | {row.note} |"
        )
    return head + "\n".join(lines) + "\n"
