"""`make edit-recovery`: run the corpus and print ``edit-recovery: K/N diagnosed, W wrong edits``.

Usage: ``python -m edit_recovery [-v]`` (``-v`` prints what the model saw for every case).
Exits non-zero when a target is missed: fewer than 90% diagnosed, any wrong edit, or a line
named for text that is not in the file.
"""

from __future__ import annotations

import sys
from collections import Counter

from .run import judge_all


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    outcomes = judge_all()
    for outcome in outcomes:
        if verbose or not outcome.diagnosed or outcome.wrong_edit:
            status = "ok" if outcome.diagnosed else f"MISSED ({outcome.why})"
            if outcome.wrong_edit:
                status = "WRONG EDIT"
            print(f"--- {outcome.case.name} [{outcome.case.kind}]: {status}")
            if verbose or not outcome.diagnosed:
                print(outcome.text)
    kinds = Counter(outcome.case.kind for outcome in outcomes)
    good = Counter(outcome.case.kind for outcome in outcomes if outcome.diagnosed)
    print("by kind: " + ", ".join(f"{kind} {good[kind]}/{kinds[kind]}" for kind in kinds))
    diagnosed = sum(outcome.diagnosed for outcome in outcomes)
    wrong = sum(outcome.wrong_edit for outcome in outcomes)
    print(f"edit-recovery: {diagnosed}/{len(outcomes)} diagnosed, {wrong} wrong edits")
    absent_named = any(o.case.kind == "absent" and not o.diagnosed for o in outcomes)
    return 0 if diagnosed >= 0.9 * len(outcomes) and not wrong and not absent_named else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
