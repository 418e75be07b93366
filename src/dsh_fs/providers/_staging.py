"""Private staging directories: naming them after their owner, and sweeping dead owners' ones.

A write stages its content in a hidden sibling directory named
``.dsh-fs-stage-<host>-<pid>-<random>``. A process killed mid-write leaves that directory
behind (never a stray file in the workspace: the staged file lives inside it). The sweep
removes such residue, and only where the owner is provably gone: the owner is a process of
this host that no longer exists. Directories of live processes, of other hosts (a shared
network filesystem) or with a name we did not make are left alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import socket

__all__ = ["STAGE_PREFIX", "new_stage_dir", "new_stage_dir_at", "sweep_stage_dirs"]

STAGE_PREFIX = ".dsh-fs-stage-"
"""Prefix of every staging directory."""

_HOST = hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def new_stage_dir_at(dir_fd: int) -> str:
    """Create a fresh staging directory (mode 0700) in the open directory `dir_fd`; returns
    its name (relative to `dir_fd`)."""
    while True:
        name = f"{STAGE_PREFIX}{_HOST}-{os.getpid()}-{secrets.token_hex(6)}"
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            continue
        return name


def new_stage_dir(parent: str) -> str:
    """Create a fresh staging directory (mode 0700) in `parent` and return its path."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return os.path.join(parent, new_stage_dir_at(fd))
    finally:
        os.close(fd)


def sweep_stage_dirs(parent: str) -> int:
    """Remove the staging directories in `parent` whose owner process is gone.

    Returns how many were removed. Safe to run concurrently with writers and other sweepers:
    a live owner's directory is never touched, and losing a race to remove residue is fine.
    """
    try:
        names = [name for name in os.listdir(parent) if name.startswith(STAGE_PREFIX)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        if _owner_is_gone(name):
            path = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
                removed += 1
    return removed


def _owner_is_gone(name: str) -> bool:
    parts = name[len(STAGE_PREFIX) :].split("-", 2)
    if len(parts) != 3 or parts[0] != _HOST or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False  # ours: in flight, or cleaned up by the write that made it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, owned by another user
    return False
