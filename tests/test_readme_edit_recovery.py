"""The edit-recovery page's example and figure (docs/edit-recovery.md) are what the code
produces."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
from edit_recovery.corpus import CASES
from edit_recovery.run import run_case

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "edit-recovery.md").read_text(encoding="utf-8")


def test_the_page_s_example_is_what_the_model_sees(tmp_path: Path) -> None:
    marker = "<!-- edit-recovery example: "
    name = PAGE.split(marker, 1)[1].split(" -->", 1)[0]
    shown = PAGE.split(marker, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    case = next(case for case in CASES if case.name == name)
    root = tmp_path.resolve()
    outcome = anyio.run(run_case, case, root)
    assert outcome.diagnosed
    assert outcome.text.replace(str(root), "/work/project") + "\n" == shown


def test_the_page_s_figure_counts_the_whole_corpus() -> None:
    figure = re.search(r"edit-recovery: (\d+)/(\d+) diagnosed, (\d+) wrong edits", PAGE)
    assert figure is not None
    assert int(figure.group(2)) == len(CASES)
