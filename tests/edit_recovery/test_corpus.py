"""The edit-recovery corpus (`make edit-recovery`) as tests: every case through the real
tools on a real local workspace, and the corpus itself covering what the issue asks for."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from edit_recovery.corpus import CASES, FILES, Case
from edit_recovery.run import expected_lines, expected_span, run_case

pytestmark = pytest.mark.anyio

CAUSES = {
    "indentation",
    "tabs_vs_spaces",
    "trailing_whitespace",
    "line_number_prefixes",
    "lookalike",
    "escaped_line_breaks",
    "line_differs",
    "spacing",
    "missing_line",
    "line_order",
    "extra_line",
    "edge_line_break",
    "already_applied",
    "left_out_lines",
    "loosely_similar",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_the_case_is_diagnosed_and_nothing_is_written(case: Case, root: Path) -> None:
    outcome = await run_case(case, root)
    assert not outcome.wrong_edit, outcome.text
    assert outcome.diagnosed, f"{outcome.why}\n{outcome.text}"


def test_the_corpus_has_every_cause_every_kind_and_every_file() -> None:
    kinds = Counter(case.kind for case in CASES)
    assert len(CASES) >= 40
    assert kinds["ambiguous"] >= 3
    assert kinds["exact"] >= 3
    assert kinds["absent"] >= 3
    assert {case.cause for case in CASES if case.cause} == CAUSES
    assert {case.file for case in CASES} == set(FILES)
    assert FILES["InvoiceRunner.cs"].crlf
    assert b"\t" in FILES["Makefile"].content()
    assert "\u201c".encode() in FILES["announcement.md"].content()
    assert len({case.name for case in CASES}) == len(CASES)


def test_every_case_means_text_that_is_really_there_once() -> None:
    for case in CASES:
        if case.kind in ("near_miss", "applied"):
            first, last = expected_span(case)
            assert 1 <= first <= last, case.name
        if case.kind == "ambiguous":
            assert len(expected_lines(case)) >= 2, case.name
