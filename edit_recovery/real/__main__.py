"""``python -m edit_recovery.real``: the held-out real cases through the real tools.

Prints each non-named case's id and the diagnosis text, then
``K/N named, X nothing-close, Y elsewhere, W wrong edits``. Exits non-zero only on a wrong
edit (the figures are a measurement, not a gate).
"""

from __future__ import annotations

import sys
from collections import Counter

from . import judge_all


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    verdicts = judge_all()
    for verdict in verdicts:
        if verbose or verdict.kind != "named":
            print(f"--- {verdict.case.id}: {verdict.kind}")
            print(verdict.text)
    kinds = Counter(verdict.kind for verdict in verdicts)
    print(
        f"{kinds['named']}/{len(verdicts)} named, {kinds['nothing-close']} nothing-close, "
        f"{kinds['elsewhere']} elsewhere, {kinds['wrong-edit']} wrong edits"
    )
    return 1 if kinds["wrong-edit"] else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
