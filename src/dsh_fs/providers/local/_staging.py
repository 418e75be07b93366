"""Private staging names: naming them after their owner, and sweeping dead owners' ones.

A write stages its content in a hidden sibling directory named
``.dsh-fs-stage-<host>-<pid>-<random>``. A process killed mid-write leaves that directory
behind (never a stray file in the workspace: the staged file lives inside it). An unnamed
(``O_TMPFILE``) publication that replaces a file links it under such a name for the one
rename that follows; a process killed between the two leaves that file. The sweep removes
such residue, and only where the owner is provably gone: the owner is a process of this host
that no longer exists. Residue of live processes, of other hosts (a shared network
filesystem) or with a name we did not make is left alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import socket

__all__ = [
    "STAGE_PREFIX",
    "new_stage_dir",
    "new_stage_dir_at",
    "stage_file_name",
    "sweep_stage_dirs",
    "sweep_stage_dirs_at",
]

STAGE_PREFIX = ".dsh-fs-stage-"
"""Prefix of every staging directory."""

_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

_HOST = hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def stage_file_name() -> str:
    """A fresh staging name of this process (a directory's, or an unnamed file's link)."""
    return f"{STAGE_PREFIX}{_HOST}-{os.getpid()}-{secrets.token_hex(6)}"


def new_stage_dir_at(dir_fd: int) -> str:
    """Create a fresh staging directory (mode 0700) in the open directory `dir_fd`; returns
    its name (relative to `dir_fd`)."""
    while True:
        name = stage_file_name()
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            continue
        return name


def new_stage_dir(parent: str) -> str:
    """Create a fresh staging directory (mode 0700) in `parent` and return its path."""
    fd = os.open(parent, _OPEN_DIRECTORY)
    try:
        return os.path.join(parent, new_stage_dir_at(fd))
    finally:
        os.close(fd)


def sweep_stage_dirs(parent: str) -> int:
    """Remove the staging directories in `parent` whose owner process is gone (see
    `sweep_stage_dirs_at`); returns how many. A `parent` that can't be opened has none."""
    try:
        fd = os.open(parent, _OPEN_DIRECTORY)
    except OSError:
        return 0
    try:
        return sweep_stage_dirs_at(fd)
    finally:
        os.close(fd)


def sweep_stage_dirs_at(dir_fd: int) -> int:
    """Remove the staging residue in the open directory `dir_fd` whose owner is gone: its
    staging directories and the regular files linked under a staging name.

    Returns how many were removed. Every step is relative to a descriptor and follows no
    link: the residue is listed through `dir_fd`, each residue directory opened from it with
    ``O_NOFOLLOW`` and emptied through its own descriptor, so nothing outside the directory
    the caller opened (and checked) is ever listed or removed, whatever is swapped meanwhile.
    Only what a staging directory holds is removed: files and links (never followed), not
    subdirectories, which we never make. Safe to run concurrently with writers and other
    sweepers: a live owner's directory is never touched, and losing a race is fine.
    """
    try:
        with os.scandir(dir_fd) as entries:
            found = [
                (entry.name, entry.is_dir(follow_symlinks=False))
                for entry in entries
                if entry.name.startswith(STAGE_PREFIX)
                and (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False))
            ]
    except OSError:
        return 0
    return sum(
        1
        for name, is_dir in found
        if _owner_is_gone(name)
        and (_remove_stage_dir(dir_fd, name) if is_dir else _remove_stage_file(dir_fd, name))
    )


def _remove_stage_file(dir_fd: int, name: str) -> bool:
    """Unlink the staging file `name` in `dir_fd` (the link itself); False if it resisted."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        return False
    return True


def _remove_stage_dir(dir_fd: int, name: str) -> bool:
    """Empty and remove the staging directory `name` in `dir_fd`; False if it resisted."""
    try:
        fd = os.open(name, _OPEN_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        with os.scandir(fd) as entries:
            inside = [entry.name for entry in entries if not entry.is_dir(follow_symlinks=False)]
        for entry in inside:
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=fd)
        os.rmdir(name, dir_fd=dir_fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


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
