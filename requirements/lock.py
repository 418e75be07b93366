"""Write the dev lock, ``requirements/dev.lock`` (`make lock`): the dev tools of the ``dev``
extra and everything they need, one ``name==version`` a line (``pip freeze`` style), for
``pip install -c``.

Each supported Python found on this machine (PATH first, then pyenv, as ``.ci/run`` looks)
resolves ``.[dev]`` afresh (``pip install --dry-run --report``: nothing is installed). A
version every one of them resolved is pinned plainly; where they differ (a release that
dropped an older Python), each version is pinned with a ``python_version`` marker, which
``pip install -c`` honours as it does a requirement's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
"""The Pythons the project supports (pyproject's classifiers)."""

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "dsh-fs"
LOCK = ROOT / "requirements" / "dev.lock"
INSTALLER = "uv"
"""What `make venv` installs the dev tools with (pip where it cannot be installed): no
requirement of the package, so it is resolved beside ``.[dev]``."""

HEADER = """\
# The dev tools (the dev extra's own requirements) and what they need, pinned, with uv that
# installs them: `make venv` installs with `uv pip install -c requirements/dev.lock` (pip's
# `-c` where uv cannot), so a new release of a tool cannot turn CI red before someone
# refreshes this file. Refresh: `make lock` (see AGENTS.md).
# Written by requirements/lock.py from fresh resolutions on Python {pythons}.
"""


def _pythons() -> dict[str, str]:
    """The supported Pythons that run here, by version: ``pythonX.Y`` on PATH, else pyenv's."""
    found: dict[str, str] = {}
    pyenv_root = None
    if shutil.which("pyenv"):
        pyenv_root = subprocess.run(
            ["pyenv", "root"], capture_output=True, text=True, check=True
        ).stdout.strip()
    for version in SUPPORTED:
        candidates = [shutil.which(f"python{version}") or ""]
        if pyenv_root:
            installed = sorted(Path(pyenv_root, "versions").glob(f"{version}.*"))
            candidates += [str(p / "bin" / f"python{version}") for p in installed]
        # pyenv's shims are on PATH for every installed version but fail unless activated.
        runs = [c for c in candidates if c and _runs(c)]
        if runs:
            found[version] = runs[0]
    return found


def _runs(python: str) -> bool:
    done = subprocess.run([python, "-c", ""], capture_output=True, check=False)
    return done.returncode == 0


def _resolve(python: str, into: Path) -> dict[str, Any]:
    """What `python` would install for ``.[dev]`` and the installer (pip's installation report)."""
    report = into / "report.json"
    subprocess.run(
        [
            *(python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"),
            *("--report", str(report), f"{ROOT}[dev]", INSTALLER),
        ],
        check=True,
        cwd=into,
    )
    result: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return result


def _needed(requirement: Requirement, environment: dict[str, str], extra: str) -> bool:
    marker: Marker | None = requirement.marker
    return marker is None or marker.evaluate({**environment, "extra": extra})


def _tool_versions(report: dict[str, Any]) -> dict[str, str]:
    """The dev tools of the report's resolution, the installer, and everything they need:
    name -> version.

    The metadata repeats under `dev` what the extras it names require (``dsh-fs[all,...]``
    is flattened), so a tool is a `dev` requirement no other extra (nor the package) has.
    """
    environment: dict[str, str] = report["environment"]
    items: dict[str, Any] = {
        canonicalize_name(i["metadata"]["name"]): i["metadata"] for i in report["install"]
    }
    project = items[PROJECT]
    requires = [Requirement(text) for text in project.get("requires_dist", [])]
    others = [e for e in project.get("provides_extra", []) if e != "dev"]
    elsewhere = {
        canonicalize_name(r.name)
        for r in requires
        if any(_needed(r, environment, extra) for extra in ("", *others))
    }
    pending = [
        (r.name, set(r.extras))
        for r in requires
        if _needed(r, environment, "dev") and canonicalize_name(r.name) not in elsewhere
    ]
    pending.append((INSTALLER, set()))
    followed: dict[str, set[str]] = {}
    while pending:
        name, extras = pending.pop()
        key = canonicalize_name(name)
        if key not in items or (key in followed and extras <= followed[key]):
            continue
        followed[key] = followed.get(key, set()) | extras
        for text in items[key].get("requires_dist", []):
            needed = Requirement(text)
            if any(_needed(needed, environment, e) for e in ("", *sorted(followed[key]))):
                pending.append((needed.name, set(needed.extras)))
    return {key: items[key]["version"] for key in followed}


def _marker(versions: list[str]) -> str:
    """A marker for the supported Pythons `versions` (a run of them, as pins split)."""
    if len(versions) == 1:
        return f'python_version == "{versions[0]}"'
    if versions[-1] == SUPPORTED[-1]:
        return f'python_version >= "{versions[0]}"'
    if versions[0] == SUPPORTED[0]:
        return f'python_version <= "{versions[-1]}"'
    return " or ".join(f'python_version == "{v}"' for v in versions)


def _lines(resolved: dict[str, dict[str, str]]) -> list[str]:
    """The pins: `resolved` is each Python's tools and their versions."""
    pythons = sorted(resolved, key=SUPPORTED.index)
    lines = []
    for name in sorted({n for versions in resolved.values() for n in versions}):
        by_version: dict[str, list[str]] = defaultdict(list)
        for python in pythons:
            if name in resolved[python]:
                by_version[resolved[python][name]].append(python)
        if len(by_version) == 1 and len(next(iter(by_version.values()))) == len(pythons):
            lines.append(f"{name}=={next(iter(by_version))}")
            continue
        for version, on in by_version.items():
            lines.append(f"{name}=={version}; {_marker(on)}")
    return lines


def main() -> None:
    pythons = _pythons()
    if not pythons:
        sys.exit(f"requirements/lock.py: no supported Python ({', '.join(SUPPORTED)}) found")
    resolved: dict[str, dict[str, str]] = {}
    for version, python in pythons.items():
        print(f"requirements/lock.py: resolving .[dev] on Python {version} ({python})")
        with tempfile.TemporaryDirectory(prefix="dsh-fs-lock-") as folder:
            report = _resolve(python, Path(folder))
        resolved[version] = _tool_versions(report)
    # `make venv` upgrades pip before anything else: to the one this lock was made with.
    pins = [*_lines(resolved), f"pip=={metadata.version('pip')}"]
    pins.sort(key=lambda pin: pin.partition("==")[0])  # by name; a name's pins as they came
    text = HEADER.format(pythons=", ".join(pythons)) + "\n".join(pins) + "\n"
    LOCK.write_text(text, encoding="utf-8")
    print(f"requirements/lock.py: wrote {os.path.relpath(LOCK)}")


if __name__ == "__main__":
    main()
