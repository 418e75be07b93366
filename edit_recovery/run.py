"""Run the corpus through the real tools on a real local workspace and judge each answer.

A case is run on a fresh copy of its sample file: the session reads the file (the policy
requires it), sends the edit, and the disk is compared byte for byte afterwards. What a
"diagnosed" answer must contain is computed here from the case alone (the file text and
`meant`), never from the diagnosis code.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Workspace

from .corpus import CASES, FILES, Case

__all__ = ["Outcome", "expected_lines", "expected_span", "judge_all", "run_case"]

_NAMES_A_LINE = re.compile(r"\blines? \d|^\d+: ", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How one case went."""

    case: Case
    """The case."""
    diagnosed: bool
    """The answer is the right one (see the corpus docstring for each kind)."""
    wrong_edit: bool
    """A near-miss or control that must fail succeeded, or the file changed when it must
    not have."""
    text: str
    """What the model saw."""
    why: str
    """Empty when diagnosed; else what was missing."""


def normalized(case: Case) -> str:
    """The sample file's text as the edit matches it: no BOM, LF line breaks."""
    text = FILES[case.file].content().decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def expected_span(case: Case) -> tuple[int, int]:
    """The lines of `case.meant` in the file (it must occur exactly once)."""
    assert case.meant is not None, case.name
    text = normalized(case)
    start = text.find(case.meant)
    assert start != -1, case.name
    assert text.find(case.meant, start + 1) == -1, case.name
    first = text.count("\n", 0, start) + 1
    return first, first + case.meant.rstrip("\n").count("\n")


def expected_lines(case: Case) -> list[int]:
    """Where each occurrence of `case.old` starts, for an ambiguous case."""
    text, old = normalized(case), case.old.replace("\r\n", "\n")
    lines, pos = [], text.find(old)
    while pos != -1:
        lines.append(text.count("\n", 0, pos) + 1)
        pos = text.find(old, pos + len(old))
    return lines


async def run_case(case: Case, root: Path) -> Outcome:
    """Run `case` in the empty directory `root` (a resolved path) and judge the answer."""
    sample = FILES[case.file]
    path = root / sample.name
    before = sample.content()
    path.write_bytes(before)
    async with Workspace.local(root) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": sample.name})
        assert not read.is_error, read.text
        result = await session.call(
            "edit", {"file_path": sample.name, "old_string": case.old, "new_string": case.new}
        )
    after = path.read_bytes()
    details: dict[str, Any] = dict(result.details or {})
    if case.kind == "exact":
        why = "" if not result.is_error and after != before else f"failed: {result.text}"
        return Outcome(case=case, diagnosed=not why, wrong_edit=False, text=result.text, why=why)
    wrong = not result.is_error or after != before
    why = _judge(case, result.code, result.text, details)
    return Outcome(
        case=case, diagnosed=not why and not wrong, wrong_edit=wrong, text=result.text, why=why
    )


def _judge(case: Case, code: str | None, text: str, details: dict[str, Any]) -> str:
    diagnosis = text.split("\n", 1)[1] if "\n" in text else ""
    if case.kind == "ambiguous":
        if code != "FS_AMBIGUOUS_EDIT":
            return f"code {code}"
        lines = expected_lines(case)
        if details.get("lines") != lines[:20]:
            return f"lines {details.get('lines')} != {lines}"
        named = all(re.search(rf"\b{n}\b", diagnosis) for n in lines[:20])
        return "" if named else "the text does not name every line"
    if code != "FS_EDIT_NOT_FOUND":
        return f"code {code}"
    if case.kind == "absent":
        if details.get("closest") is not None or _NAMES_A_LINE.search(diagnosis):
            return "names a line for text that is not there"
        return ""
    first, last = expected_span(case)
    where = details.get("new_string_at" if case.kind == "applied" else "closest")
    if where != {"start": first, "end": last}:
        return f"span {where} != {first}-{last}"
    phrase = f"line {first}" if first == last else f"lines {first}-{last}"
    if phrase not in diagnosis:
        return f"the text does not name {phrase}"
    causes = [reason["cause"] for reason in details.get("reasons", [])]
    if case.cause not in causes:
        return f"cause {case.cause} not in {causes}"
    return ""


def judge_all(cases: tuple[Case, ...] = CASES) -> list[Outcome]:
    """Every case, each in its own scratch directory."""
    outcomes = []
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="edit-recovery-") as scratch:
            outcomes.append(anyio.run(run_case, case, Path(scratch).resolve()))
    return outcomes
