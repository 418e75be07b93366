"""Symbolic links: resolving a path to the file it names (`os.path.realpath`'s answer without
its failures), and reading one link.

`os.path.realpath` (before Python 3.13) raises when a link is swapped for a file between its
`lstat` and its `readlink` (EINVAL) and recurses once per link, so a chain of a thousand
links is a `RecursionError`. Both reached the model as internal errors. `real_path` walks the
components in a loop, asks `readlink` alone whether a component is a link (one atomic answer,
so there is nothing to race), and follows at most as many links as the kernel would.
"""

from __future__ import annotations

import errno
import os
import stat as st_mode
from dataclasses import dataclass

from dsh_fs._platform import (
    RESOLVE_NO_MAGICLINKS,
    RESOLVE_NO_SYMLINKS,
    descriptor_path,
    open_confined,
)

__all__ = [
    "MAX_SYMLINKS",
    "PATH_MAX",
    "LinkChanged",
    "Resolved",
    "kernel_path",
    "lstat_link",
    "real_path",
    "resolve_path",
    "still_real",
]

MAX_SYMLINKS = 40
"""Links one resolution may follow: Linux's limit for one path lookup (``MAXSYMLINKS``), past
which the kernel itself answers ELOOP, "too many levels of symbolic links"."""


def _path_max() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError):
        return 4096


PATH_MAX = _path_max()
"""Bytes in a path the kernel accepts (with its NUL); a longer one is ENAMETOOLONG."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """A path resolved by `resolve_path`."""

    path: str
    """What `real_path` answers."""
    failed: int
    """The errno of the first component the kernel could not look up: ENOENT (missing),
    ENOTDIR (below something that is not a directory), ELOOP, ENAMETOOLONG, ...; 0 when
    every component exists (what `os.path.realpath(strict=True)` would have raised)."""


def real_path(path: str, *, strict: bool = False) -> str:
    """The absolute path that absolute `path` names once every symlink is followed.

    Where `path` resolves within `MAX_SYMLINKS` links this is `os.path.realpath(path)`: ``..``
    after a link is taken physically, and a missing tail (a dangling link's target, a name
    below a file) is kept as spelled. A component replaced while it is resolved is taken as
    it was when `readlink` looked at it: a link that became a file is a file, one that
    vanished is missing. That answer is as good as any path check can give; what is opened
    later is checked on the kernel's side (`LocalGuards`).

    A path that needs more links (a loop, or a chain longer than the kernel follows) is
    returned as spelled, so that opening it fails as the kernel fails it (ELOOP); with
    `strict` it raises that error here instead. So is a path longer than the kernel accepts
    (ENAMETOOLONG), without looking at its components: resolving thousands of them one
    system call each costs time quadratic in the length, for a path nothing can open.

    Raises:
        OSError: ELOOP or ENAMETOOLONG, with `strict` only.
    """
    return resolve_path(path, strict=strict).path


def resolve_path(path: str, *, strict: bool = False) -> Resolved:
    """`real_path`, and whether every component of the way exists (see `Resolved.failed`).

    Raises:
        OSError: ELOOP or ENAMETOOLONG, with `strict` only.
    """
    if len(os.fsencode(path)) >= PATH_MAX:
        if strict:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
        return Resolved(path=path, failed=errno.ENAMETOOLONG)
    # A path with no link on its way (the usual one) is its own answer: one `openat2` says
    # so, where `kernel_path` needs a second call to ask the kernel for the path it reached.
    if still_real(path):
        return Resolved(path=path, failed=0)
    kernel = kernel_path(path)
    if kernel is not None:
        return Resolved(path=kernel, failed=0)
    pending = path.split("/")[::-1]  # components still to walk, the next one last
    resolved = ""  # the walked prefix ("/a/b"); "" is the root
    links = 0
    failed = 0
    while pending:
        name = pending.pop()
        if not name or name == ".":
            continue
        if name == "..":
            resolved = resolved[: max(resolved.rfind("/"), 0)]
            continue
        candidate = f"{resolved}/{name}"
        try:
            target = os.readlink(candidate)
        except OSError as exc:
            # Not a link (EINVAL: it exists), missing (ENOENT), below a file (ENOTDIR),
            # unsearchable, too long: the name stays as spelled, as realpath keeps it.
            if exc.errno != errno.EINVAL and not failed:
                failed = exc.errno or errno.EIO
            resolved = candidate
            continue
        links += 1
        if links > MAX_SYMLINKS:
            if strict:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            return Resolved(path=path, failed=errno.ELOOP)
        if target.startswith("/"):
            resolved = ""
        pending.extend(target.split("/")[::-1])
    return Resolved(path=resolved or "/", failed=failed)


_LOOKUP = getattr(os, "O_PATH", 0)
"""An ``O_PATH`` open looks a path up and opens nothing: a FIFO, a device or a file without
read permission is never opened for real. (Never with ``O_NOFOLLOW``: with ``O_PATH`` it
opens a final link itself, which ``RESOLVE_NO_SYMLINKS`` would then let through.)"""

_DELETED = " (deleted)"
"""What Linux appends to a descriptor's path once its file was unlinked."""


def kernel_path(path: str) -> str | None:
    """The real path of the existing absolute `path`, looked up by the kernel (three system
    calls) where it can confine the lookup; None where it cannot, or when the path does not
    lead to an existing entry, crosses a magic link (``/proc/self/fd/N``: the walk reads
    such a link as text, the kernel jumps to its file) or was unlinked meanwhile: the walk
    answers then. An existing path's kernel path is the walk's answer: both take ``..``
    after a link physically and a mount point as the path reached it."""
    try:
        fd = open_confined(path, _LOOKUP, RESOLVE_NO_MAGICLINKS)
    except (OSError, ValueError):
        return None  # missing, below a file, a loop, a magic link, a NUL: the walk says
    if fd is None:
        return None
    try:
        real = descriptor_path(fd)
    finally:
        os.close(fd)
    if real is None or not real.startswith("/") or real.endswith(_DELETED):
        return None  # not a path of this namespace, or unlinked meanwhile: the walk says
    return real


def still_real(path: str) -> bool:
    """Whether the canonical absolute `path` (a `real_path` answer) still names an existing
    entry without any symbolic link on the way, the last component included, so that it is
    its own real path: one ``openat2`` with ``RESOLVE_NO_SYMLINKS`` (and a close). False
    where the kernel cannot say so in one call, when a link was swapped in since, when
    nothing is there, or for a path that is not canonical (relative; an empty, ``.`` or
    ``..`` component; a trailing slash): the caller resolves the path the usual way then."""
    if (
        not path.startswith("/")
        or "//" in path
        or "/./" in path
        or "/../" in path
        or path.endswith(("/.", "/.."))
        or (path.endswith("/") and path != "/")
    ):
        return False  # not canonical: lexical steps the kernel would take differently
    try:
        fd = open_confined(path, _LOOKUP, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    except (OSError, ValueError):
        return False
    if fd is None:
        return False
    os.close(fd)
    return True


_LSTAT_ATTEMPTS = 8
"""How often `lstat_link` looks again at an entry that keeps changing between link and not."""


class LinkChanged(Exception):
    """An entry kept switching between a symbolic link and something else while it was read."""


def lstat_link(path: str) -> tuple[os.stat_result, str | None]:
    """The `lstat` of `path` and, when it is a symbolic link, its target, both of one moment.

    An entry swapped for a non-link between the two calls is looked at again (a few times).

    Raises:
        OSError: from `lstat` or `readlink` (FileNotFoundError once it is gone).
        LinkChanged: it changed every time it was looked at.
    """
    for _ in range(_LSTAT_ATTEMPTS):
        info = os.lstat(path)
        if not st_mode.S_ISLNK(info.st_mode):
            return info, None
        try:
            return info, os.readlink(path)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
    raise LinkChanged(path)
