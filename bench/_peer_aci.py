"""OpenHands ACI's editor on one workload; run by the peers' own interpreter (bench/.peers/venv).

``python bench/_peer_aci.py SPEC`` prints ``{"times": [...]}`` or ``{"error": "..."}``. It
imports nothing from dsh-fs or the bench package: that venv has only openhands-aci in it.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    spec: dict[str, Any] = json.loads(sys.argv[1])
    from openhands_aci.editor import file_editor  # type: ignore[import-not-found]

    path = Path(spec["path"])
    workload, repeats = spec["workload"], spec["repeats"]
    if workload in ("edit", "write"):
        work = path.with_name(f"work-aci-{path.name}")
        shutil.copyfile(path, work)
        path = work
    marker, alt = spec.get("marker", ""), spec.get("alt", "")

    def step(i: int) -> None:
        if workload == "read":
            first = spec["offset"]
            out = file_editor(command="view", path=str(path), view_range=[first, first + 1999])
        elif workload == "small-read":
            out = file_editor(command="view", path=str(path))
        elif workload == "edit":
            old, new = (marker, alt) if i % 2 == 0 else (alt, marker)
            out = file_editor(command="str_replace", path=str(path), old_str=old, new_str=new)
        else:
            raise SystemExit(f"unknown workload {workload!r}")
        text = str(out)
        if "ERROR" in text[:200] or "error" in text[:40].lower():
            raise RuntimeError(text[:300])

    try:
        step(0)
        times = []
        for i in range(1, repeats + 1):
            start = time.perf_counter()
            step(i)
            times.append(time.perf_counter() - start)
    except Exception as exc:  # reported as the peer's answer to this workload
        print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        return
    print(json.dumps({"times": times}))


if __name__ == "__main__":
    main()
