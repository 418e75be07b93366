"""The platform module: what the portable code paths do, forced on Linux, and what a
system dsh-fs does not run on is told."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import _platform
from dsh_fs.providers.local._open import UNVERIFIED, fd_path


def test_forcing_the_portable_paths_turns_every_linux_call_off(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with _platform.force(_platform.PORTABLE):
            assert _platform.CURRENT == _platform.PORTABLE
            assert _platform.descriptor_path(fd) is None
            assert _platform.renameat2() is None
            assert _platform.parent_open_flag() == os.O_RDONLY
            assert _platform.copy_in_kernel(fd, fd, 10) == 0
            umask = _platform.process_umask()  # the set-and-restore way
        assert _platform.process_umask() == umask
        assert _platform.CURRENT == _platform.NATIVE
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_on_linux_the_kernel_names_a_descriptor_after_its_file_moved(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    fd = os.open(tmp_path / "a.txt", os.O_RDONLY)
    try:
        os.rename(tmp_path / "a.txt", tmp_path / "b.txt")
        assert _platform.descriptor_path(fd) == str(tmp_path / "b.txt")
        assert fd_path(fd, str(tmp_path / "a.txt")) == str(tmp_path / "b.txt")
    finally:
        os.close(fd)


def test_the_portable_path_of_a_descriptor_is_the_path_only_while_it_leads_there(
    tmp_path: Path, portable: None
) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "other.txt").write_text("other\n", encoding="utf-8")
    real = os.path.realpath(tmp_path / "a.txt")
    fd = os.open(tmp_path / "a.txt", os.O_RDONLY)
    try:
        assert fd_path(fd, str(tmp_path / "a.txt")) == real
        os.rename(tmp_path / "a.txt", tmp_path / "moved.txt")
        os.symlink(tmp_path / "other.txt", tmp_path / "a.txt")  # the path now leads elsewhere
        assert fd_path(fd, str(tmp_path / "a.txt")) == UNVERIFIED
        os.unlink(tmp_path / "a.txt")
        os.rename(tmp_path / "moved.txt", tmp_path / "a.txt")
        assert fd_path(fd, str(tmp_path / "a.txt")) == real
    finally:
        os.close(fd)


def test_the_environment_can_force_the_portable_paths_for_a_whole_process() -> None:
    code = "from dsh_fs import _platform; print(_platform.CURRENT == _platform.PORTABLE)"
    env = {**os.environ, "DSH_FS_PLATFORM": "portable"}
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == "True"


def test_importing_on_windows_says_to_use_wsl_instead_of_failing_on_fcntl() -> None:
    # The interpreter is told it is on Windows before dsh_fs is imported.
    code = "import sys\nsys.platform = 'win32'\nimport dsh_fs\n"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert ran.returncode == 1
    last = ran.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: dsh-fs runs on Linux and macOS; on Windows, install and run it inside "
        "WSL (Windows Subsystem for Linux)"
    )


SRC = Path(__file__).resolve().parent.parent / "src" / "dsh_fs"

PLATFORM_SPECIFIC = {
    ("os", "fsync"),
    ("os", "copy_file_range"),
    ("os", "O_PATH"),
    ("os", "O_TMPFILE"),
    ("fcntl", "fcntl"),
    ("fcntl", "ioctl"),
}
"""Calls and flags that differ between Linux and macOS (``flock`` and ``LOCK_*`` do not)."""


def test_only_the_platform_module_makes_a_platform_specific_call() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_platform.py" and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {  # every string standing alone: a docstring, an attribute's doc
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        relative = path.relative_to(SRC)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                name = (node.value.id, node.attr)
                if name in PLATFORM_SPECIFIC or (name[0] == "fcntl" and name[1].startswith("F_")):
                    found.append(f"{relative}:{node.lineno}: {'.'.join(name)}")
            elif isinstance(node, ast.Constant) and id(node) not in docstrings:
                text = node.value if isinstance(node.value, str) else ""
                if "/proc/" in text or text == "renameat2":  # a path, a libc lookup
                    found.append(f"{relative}:{node.lineno}: {text!r}")
    assert found == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_link_counts_are_trusted_only_on_filesystems_that_keep_them(tmp_path: Path) -> None:
    kind = _platform.links_count_subdirectories
    assert not kind(os.stat("/proc").st_dev)  # procfs
    assert not kind(0xFFFF_FFFF)  # no such device
    with _platform.force(_platform.PORTABLE):
        assert not kind(os.stat(tmp_path).st_dev)  # nothing read from /proc
