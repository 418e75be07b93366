"""The installs docs/install.md shows, from a clone's URL (``git+file://``, no checkout
needed): plain pip into a fresh virtual environment (always), and pipx, ``uv tool install``
and ``uvx --from`` (each installed from PyPI into a temporary environment first). Each
installed ``dsh-fs`` then answers an MCP ``initialize`` (the ``mcp`` extra came along).
Everything, caches included, stays in the test's folder; a test skips, saying why, when the
package index cannot be reached."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

OFFLINE = re.compile(
    r"(Could not find a version that satisfies|No matching distribution found|"
    r"Failed to establish a new connection|Temporary failure in name resolution|"
    r"Network is unreachable|error sending request|Failed to fetch)"
)
"""What pip and uv say when the package index is out of reach (then the test skips)."""

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "install-test", "version": "0"},
        },
    }
)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("install")


@pytest.fixture(scope="module")
def clone_url(place: Path) -> str:
    """A clone of this checkout's commit, by a ``git+file://`` URL."""
    clone = place / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    return f"git+{clone.as_uri()}"


@pytest.fixture(scope="module")
def env(place: Path) -> dict[str, str]:
    """The environment of every install: its caches, homes and tool folders in `place`."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_"))}
    return {
        **keep,
        "HOME": str(place / "home"),
        "XDG_CACHE_HOME": str(place / "cache"),
        "XDG_DATA_HOME": str(place / "data"),
        "XDG_STATE_HOME": str(place / "state"),
        "PIP_CACHE_DIR": str(place / "cache" / "pip"),
        "UV_CACHE_DIR": str(place / "cache" / "uv"),
        "UV_PYTHON_DOWNLOADS": "never",
        "PIPX_HOME": str(place / "pipx"),
        "PIPX_BIN_DIR": str(place / "pipx-bin"),
        "PIPX_MAN_DIR": str(place / "man"),
        "UV_TOOL_DIR": str(place / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(place / "uv-bin"),
    }


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run an install step; skips the test when the package index is out of reach."""
    ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    if ran.returncode != 0 and OFFLINE.search(ran.stdout + ran.stderr):
        pytest.skip(f"the package index is out of reach: {command[0]} said {ran.stderr[-300:]}")
    assert ran.returncode == 0, f"{command}\n{ran.stdout}\n{ran.stderr}"
    return ran


def venv(place: Path, name: str, env: dict[str, str]) -> Path:
    """A fresh virtual environment (this Python's) without pip; its ``bin``."""
    folder = place / name
    run([sys.executable, "-m", "venv", "--without-pip", str(folder)], env)
    return folder / "bin"


def pip_install(bin_dir: Path, env: dict[str, str], *requirements: str) -> None:
    """Install into `bin_dir`'s environment with this environment's pip (a recent one)."""
    python = str(bin_dir / "python")
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", *requirements], env)


def serves_mcp(command: list[str], env: dict[str, str], root: Path) -> None:
    """`command` (a ``dsh-fs``) answers ``initialize`` over stdio with its server info."""
    root.mkdir(exist_ok=True)
    ran = subprocess.run(
        [*command, "mcp", "--no-journal", str(root)],
        input=INITIALIZE + "\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout.splitlines()[0])
    assert answer["result"]["serverInfo"]["name"] == "dsh-fs"
    version = subprocess.run(
        [*command, "--version"], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert version.stdout.startswith("dsh-fs ")


def test_pip_installs_the_mcp_extra_from_a_git_url(
    place: Path, clone_url: str, env: dict[str, str]
) -> None:
    bin_dir = venv(place, "pip-venv", env)
    pip_install(bin_dir, env, f"dsh-fs[mcp] @ {clone_url}")
    serves_mcp([str(bin_dir / "dsh-fs")], env, place / "served")
    imported = run(
        [str(bin_dir / "python"), "-c", "import mcp, dsh_fs; print(dsh_fs.__file__)"], env
    )
    assert str(bin_dir.parent) in imported.stdout  # the installed copy, not this checkout


@pytest.mark.slow
def test_pipx_installs_the_dsh_fs_command_from_a_git_url(
    place: Path, clone_url: str, env: dict[str, str]
) -> None:
    tools = venv(place, "pipx-venv", env)
    pip_install(tools, env, "pipx")
    run([str(tools / "pipx"), "install", f"dsh-fs[mcp] @ {clone_url}"], env)
    serves_mcp([str(place / "pipx-bin" / "dsh-fs")], env, place / "served")


@pytest.mark.slow
def test_uv_tool_install_and_uvx_run_dsh_fs_from_a_git_url(
    place: Path, clone_url: str, env: dict[str, str]
) -> None:
    tools = venv(place, "uv-venv", env)
    pip_install(tools, env, "uv")
    uv = str(tools / "uv")
    spec = f"dsh-fs[mcp] @ {clone_url}"
    run([uv, "tool", "install", "--python", sys.executable, spec], env)
    serves_mcp([str(place / "uv-bin" / "dsh-fs")], env, place / "served")
    serves_mcp(
        [str(tools / "uvx"), "--python", sys.executable, "--from", spec, "dsh-fs"],
        env,
        place / "served",
    )
