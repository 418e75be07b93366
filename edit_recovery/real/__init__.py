"""Held-out real cases: failed exact-replace edits that real models made, from public agent
transcripts (issue 25). Each case is one JSON file under ``cases/``: where it came from, the
file text at the call (as the transcript itself showed it), the model's old_string and
new_string verbatim, and the intended line span (fixed by the model's next successful edit).

Run ``python -m edit_recovery.real`` to send every case through the real ``edit`` tool after a
``read`` in a scratch workspace and print ``K/N named, X nothing-close, Y elsewhere, W wrong
edits``, for all cases and for each set (batch) of them. These cases are never used to tune
the diagnosis.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Workspace

__all__ = ["CASES_DIR", "RealCase", "Verdict", "judge_all", "load_cases", "run_case"]

CASES_DIR = Path(__file__).parent / "cases"
_LINE_SPANS = re.compile(r"\blines? (\d+)(?:-(\d+))?")


@dataclass(frozen=True, slots=True, kw_only=True)
class RealCase:
    """One failed edit a real model made."""

    id: str
    set: str
    """Which batch of held-out cases it belongs to (``first``, ``second (...)``)."""
    provenance: dict[str, Any]
    file_text: str
    old_string: str
    new_string: str
    start: int
    """First intended line (1-based, in `file_text`)."""
    end: int
    """Last intended line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """How one case went: ``named``, ``nothing-close``, ``elsewhere`` or ``wrong-edit``."""

    case: RealCase
    kind: str
    text: str
    changed: bool
    """The file's bytes differ after the call."""


def load_cases(directory: Path = CASES_DIR) -> list[RealCase]:
    """Every case under `directory`, sorted by id."""
    cases = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.append(
            RealCase(
                id=data["id"],
                set=str(data.get("set", "first")),
                provenance=data["provenance"],
                file_text=data["file_text"],
                old_string=data["old_string"],
                new_string=data["new_string"],
                start=data["intended"]["start"],
                end=data["intended"]["end"],
            )
        )
    return cases


def _spans(details: dict[str, Any], diagnosis: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for key in ("closest", "new_string_at"):
        where = details.get(key)
        if isinstance(where, dict) and "start" in where:
            spans.append((int(where["start"]), int(where["end"])))
    for also in details.get("also") or []:
        if isinstance(also, dict) and "start" in also:
            spans.append((int(also["start"]), int(also["end"])))
    for match in _LINE_SPANS.finditer(diagnosis):
        first = int(match.group(1))
        spans.append((first, int(match.group(2) or first)))
    return spans


async def run_case(case: RealCase, root: Path) -> Verdict:
    """Run `case` in the empty directory `root` (a resolved path) and classify the answer."""
    name = Path(str(case.provenance.get("file_path", "file.txt"))).name
    path = root / name
    before = case.file_text.encode("utf-8")
    path.write_bytes(before)
    async with Workspace.local(root) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": name})
        assert not read.is_error, read.text
        arguments = {"file_path": name, "old_string": case.old_string}
        result = await session.call("edit", {**arguments, "new_string": case.new_string})
    changed = path.read_bytes() != before
    if not result.is_error or changed:
        return Verdict(case=case, kind="wrong-edit", text=result.text, changed=changed)
    diagnosis = result.text.split("\n", 1)[1] if "\n" in result.text else ""
    spans = _spans(dict(result.details or {}), diagnosis)
    if not spans:
        kind = "nothing-close"
    elif any(first <= case.end and case.start <= last for first, last in spans):
        kind = "named"
    else:
        kind = "elsewhere"
    return Verdict(case=case, kind=kind, text=result.text, changed=False)


def judge_all(cases: list[RealCase] | None = None) -> list[Verdict]:
    """Every case, each in its own scratch directory."""
    verdicts = []
    for case in load_cases() if cases is None else cases:
        with tempfile.TemporaryDirectory(prefix="edit-recovery-real-") as scratch:
            verdicts.append(anyio.run(run_case, case, Path(scratch).resolve()))
    return verdicts
