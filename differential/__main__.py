"""``python -m differential``: run dsh-fs over the cases and compare with the recording.

Modes:

- default: run every case through dsh-fs, compare with the recorded upstream results
  (differential/upstream.jsonl), write differential/REPORT.md, print the summary line;
- ``--emit-cases FILE``: write the cases as JSON lines, for an external upstream driver;
- ``--record RAW``: read that driver's raw results (JSON lines with each case's scratch
  ``root``), normalize them and write the recording (``--meta key=value`` adds facts such
  as the upstream commit and the Node version to its header).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from .cases import generate
from .compare import CaseOutcome, Decisions, compare_case
from .model import Case, Result, case_sha, dump_line
from .normalize import normalize_result
from .ours import HomeGuard, run_case
from .report import render_report, summary_line

HERE = Path(__file__).resolve().parent
RECORDING = HERE / "upstream.jsonl"
REPORT = HERE / "REPORT.md"
DECISIONS = HERE / "decisions.json"


def load_recording(path: Path) -> tuple[dict[str, str], dict[str, Result]]:
    """The recording's header facts and its results by case id."""
    meta: dict[str, str] = {}
    results: dict[str, Result] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record: Any = json.loads(line)
            if "meta" in record:
                meta = {str(k): str(v) for k, v in record["meta"].items()}
            else:
                results[record["id"]] = record
    return meta, results


def record(raw_path: Path, out: Path, meta_items: list[str], cases: list[Case]) -> int:
    by_id = {case["id"]: case for case in cases}
    meta = dict(item.split("=", 1) for item in meta_items)
    results: dict[str, Result] = {}
    with raw_path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            raw: Any = json.loads(line)
            case = by_id.get(raw["id"])
            if case is None:
                print(f"record: unknown case {raw['id']!r}", file=sys.stderr)
                return 1
            results[raw["id"]] = normalize_result(raw, case_sha(case))
    missing = [case["id"] for case in cases if case["id"] not in results]
    if missing:
        print(f"record: {len(missing)} cases missing, e.g. {missing[:3]}", file=sys.stderr)
        return 1
    with out.open("w", encoding="utf-8") as handle:
        handle.write(dump_line({"meta": meta}) + "\n")
        for case in cases:
            handle.write(dump_line(results[case["id"]]) + "\n")
    print(f"record: {len(results)} upstream results written to {out}")
    return 0


async def run(cases: list[Case], recording: dict[str, Result]) -> list[CaseOutcome]:
    guard = HomeGuard()
    outcomes: list[CaseOutcome] = []
    for case in cases:
        upstream = recording.get(case["id"])
        if upstream is None or upstream["case_sha"] != case_sha(case):
            outcomes.append(CaseOutcome(case, stale_recording=True))
            continue
        ours = await run_case(case)
        guard.check()
        outcomes.append(compare_case(case, upstream, ours))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m differential", description=__doc__)
    parser.add_argument("--only", metavar="GLOB", help="run only the cases whose id matches")
    parser.add_argument("--recording", type=Path, default=RECORDING)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--emit-cases", type=Path, metavar="FILE")
    parser.add_argument("--record", type=Path, metavar="RAW")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)

    cases = generate()
    if args.emit_cases is not None:
        with args.emit_cases.open("w", encoding="utf-8") as handle:
            for case in cases:
                handle.write(dump_line(case) + "\n")
        print(f"{len(cases)} cases written to {args.emit_cases}")
        return 0
    if args.record is not None:
        return record(args.record, args.recording, args.meta, cases)

    if args.only:
        cases = [case for case in cases if fnmatch.fnmatchcase(case["id"], args.only)]
    started = time.monotonic()
    meta, recording = load_recording(args.recording)
    outcomes = anyio.run(run, cases, recording)
    decisions = Decisions.load(DECISIONS)
    by_id = {case["id"]: case for case in cases}
    report = render_report(outcomes, decisions, by_id, recording, meta)
    if not args.only:
        args.report.write_text(report, encoding="utf-8")
    stale = sum(1 for o in outcomes if o.stale_recording)
    print(summary_line(outcomes, decisions))
    print(f"({time.monotonic() - started:.1f} s; report: {args.report if not args.only else '-'})")
    if stale:
        print(f"differential: {stale} cases have no current recording; re-record", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
