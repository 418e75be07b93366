"""The differential run (`make differential`) in the quick suite: every case through dsh-fs,
compared with upstream's recorded results. A divergence that no deliberate decision explains
fails here, and so does a decision that no longer matches anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential.__main__ import DECISIONS, RECORDING, REPORT, load_recording, run
from differential.cases import generate
from differential.classify import CASCADE
from differential.compare import Decisions
from differential.report import summary_line

pytestmark = pytest.mark.anyio

DIFFERENCES = Path(__file__).resolve().parent.parent / "docs" / "differences.md"


async def test_every_divergence_from_upstream_is_a_documented_decision() -> None:
    cases = generate()
    _meta, recording = load_recording(RECORDING)
    outcomes = await run(cases, recording)
    decisions = Decisions.load(DECISIONS)

    assert [o.case["id"] for o in outcomes if o.stale_recording] == []
    assert [o.case["id"] for o in outcomes if o.crash is not None] == []
    undocumented = {
        o.case["id"]: sorted(o.classes())
        for o in outcomes
        if o.diverges and not decisions.documented(o)
    }
    assert undocumented == {}
    seen = {c for o in outcomes for c in o.classes()} - {CASCADE}
    assert seen == set(decisions.by_class), "every decision explains at least one divergence"
    assert decisions.by_case == []  # each decision names a class, never a list of cases
    summary = summary_line(outcomes, decisions)
    assert summary in REPORT.read_text(encoding="utf-8"), "run `make differential`"
    assert summary in DIFFERENCES.read_text(encoding="utf-8"), "update docs/differences.md"
