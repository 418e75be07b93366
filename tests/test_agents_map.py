"""AGENTS.md's map names every source module, so a newcomer finds each file from it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "dsh_fs"


def test_every_module_under_src_is_named_in_the_agents_map() -> None:
    agents = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    map_ = agents.split("## Map", 1)[1].split("\n## ", 1)[0]
    modules = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent == PACKAGE
    )
    assert len(modules) > 100
    assert [module for module in modules if f"`{module}`" not in map_] == []


def test_every_module_the_agents_map_names_exists() -> None:
    agents = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    map_ = agents.split("## Map", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in map_.split("Outside `src/`", 1)[0].splitlines() if line[:1] == "|"]
    table = "\n".join(rows)
    named = set(re.findall(r"`([\w/]+\.py)`", table))
    assert len(named) > 100
    assert sorted(name for name in named if not (PACKAGE / name).is_file()) == []
