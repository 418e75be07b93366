"""The dev lock pins uv, the installer `make venv` uses (requirements/lock.py writes it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _lock_module() -> ModuleType:
    """requirements/lock.py, which is a script, not a package's module."""
    spec = importlib.util.spec_from_file_location("dev_lock", ROOT / "requirements" / "lock.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _item(name: str, version: str, *requires: str, extras: tuple[str, ...] = ()) -> Any:
    return {
        "metadata": {
            "name": name,
            "version": version,
            "requires_dist": list(requires),
            "provides_extra": list(extras),
        }
    }


def test_a_resolution_pins_the_installer_beside_the_dev_tools() -> None:
    lock = _lock_module()
    report = {
        "environment": {"python_version": "3.11", "sys_platform": "linux"},
        "install": [
            _item(
                "dsh-fs",
                "0.1.0",
                "anyio>=4",
                "pytest>=8; extra == 'dev'",
                extras=("dev",),
            ),
            _item("anyio", "4.9.0"),
            _item("pytest", "8.4.0", "iniconfig>=1"),
            _item("iniconfig", "2.1.0"),
            _item("uv", "0.13.9"),
        ],
    }
    assert lock._tool_versions(report) == {
        "pytest": "8.4.0",
        "iniconfig": "2.1.0",
        "uv": "0.13.9",
    }


def test_the_committed_lock_pins_uv() -> None:
    pins = (ROOT / "requirements" / "dev.lock").read_text(encoding="utf-8").splitlines()
    assert [pin for pin in pins if pin.partition("==")[0] == "uv"]
