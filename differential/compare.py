"""Compare one case's two results and classify what differs."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .classify import (
    CASCADE,
    UNCLASSIFIED,
    FileItem,
    StepItem,
    classify_file,
    classify_step,
)
from .model import Case, Result, StepResult

__all__ = ["CaseOutcome", "Decisions", "Divergence", "compare_case"]


@dataclass(frozen=True)
class Divergence:
    """One classified item: a call (``index``) or a path of the scratch root (``path``)."""

    class_id: str
    step: StepItem | None = None
    file: FileItem | None = None


@dataclass
class CaseOutcome:
    """The comparison of one case."""

    case: Case
    divergences: list[Divergence] = field(default_factory=list)
    stale_recording: bool = False
    crash: str | None = None

    @property
    def diverges(self) -> bool:
        return bool(self.divergences) or self.crash is not None

    def classes(self) -> set[str]:
        """The causes of this case's divergences (cascades left out)."""
        return {d.class_id for d in self.divergences if d.class_id != CASCADE}


@dataclass(frozen=True)
class Decisions:
    """The deliberate differences: class ids and case-id patterns, each with a reason."""

    by_class: dict[str, str]
    by_case: list[tuple[str, str]]

    @classmethod
    def load(cls, path: Path) -> Decisions:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        by_class: dict[str, str] = {}
        by_case: list[tuple[str, str]] = []
        for entry in data["deliberate"]:
            if "class" in entry:
                by_class[entry["class"]] = entry["reason"]
            for pattern in entry.get("case_ids", []):
                by_case.append((pattern, entry["reason"]))
        return cls(by_class, by_case)

    def documented(self, outcome: CaseOutcome) -> bool:
        """Whether every cause of the case's divergence is a deliberate one."""
        if outcome.crash is not None:
            return False
        if any(fnmatch.fnmatchcase(outcome.case["id"], p) for p, _ in self.by_case):
            return True
        classes = outcome.classes()
        return bool(classes) and all(c in self.by_class for c in classes)


def _same(a: StepResult | None, b: StepResult | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a["is_error"], a["text"], a["code"]) == (b["is_error"], b["text"], b["code"])


def compare_case(case: Case, upstream: Result, ours: Result) -> CaseOutcome:
    """Every diverging call and path of `case`, classified."""
    outcome = CaseOutcome(case)
    if "crash" in upstream or "crash" in ours:
        outcome.crash = f"upstream: {upstream.get('crash')!r} / ours: {ours.get('crash')!r}"
        return outcome
    first_divergent: int | None = None
    for index, (up, our) in enumerate(zip(upstream["steps"], ours["steps"], strict=True)):
        if up is None or our is None or _same(up, our):
            continue
        item = StepItem(case, index, up, our, upstream, ours)
        class_id = classify_step(item)
        if class_id == UNCLASSIFIED and first_divergent is not None:
            class_id = CASCADE
        if first_divergent is None:
            first_divergent = index
        outcome.divergences.append(Divergence(class_id, step=item))
    for path in sorted(set(upstream["files"]) | set(ours["files"])):
        up_entry, our_entry = upstream["files"].get(path), ours["files"].get(path)
        if up_entry == our_entry:
            continue
        file_item = FileItem(case, path, up_entry, our_entry)
        class_id = classify_file(file_item)
        if class_id == UNCLASSIFIED and first_divergent is not None:
            class_id = CASCADE
        outcome.divergences.append(Divergence(class_id, file=file_item))
    return outcome
