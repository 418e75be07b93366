"""``python -m edit_recovery.real``: the held-out real cases through the real tools.

Prints each non-named case's id and the diagnosis text, then
``K/N named, X nothing-close, Y elsewhere, W wrong edits`` for each set of cases and for all.
Exits non-zero only on a wrong edit (the figures are a measurement, not a gate).
"""

from __future__ import annotations

import sys
from collections import Counter

from . import Verdict, judge_all


def _figures(verdicts: list[Verdict]) -> str:
    kinds = Counter(verdict.kind for verdict in verdicts)
    return (
        f"{kinds['named']}/{len(verdicts)} named, {kinds['nothing-close']} nothing-close, "
        f"{kinds['elsewhere']} elsewhere, {kinds['wrong-edit']} wrong edits"
    )


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    verdicts = judge_all()
    for verdict in verdicts:
        if verbose or verdict.kind != "named":
            print(f"--- {verdict.case.id}: {verdict.kind}")
            print(verdict.text)
    for name in sorted({verdict.case.set for verdict in verdicts}):
        print(f"set {name}: {_figures([v for v in verdicts if v.case.set == name])}")
    print(_figures(verdicts))
    return 1 if any(verdict.kind == "wrong-edit" for verdict in verdicts) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
