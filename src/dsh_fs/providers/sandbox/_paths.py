"""Pure containment logic of the sandbox: canonical roots and "is this path inside?".

Containment is decided on canonical (symlink-free, absolute) paths by comparing path
components, never string prefixes: ``/srv/root-evil`` is not inside ``/srv/root``. POSIX
only: names are compared byte-for-byte, so on a case-insensitive filesystem a differently
cased spelling of a root is outside (the fence fails closed).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

from ..local import real_path, still_real

__all__ = ["canonical", "canonical_root", "is_within", "within_any"]


def canonical_root(root: str | os.PathLike[str]) -> str:
    """The real path of an existing directory to fence in.

    Raises:
        ValueError: `root` is empty, contains a NUL byte, does not exist or is not a directory.
    """
    text = os.fspath(root)
    if not text or "\0" in text:
        raise ValueError(f"sandbox root {text!r} is not a usable path")
    try:
        real = real_path(os.path.abspath(text), strict=True)
    except OSError as exc:
        reason = (
            "file name too long"
            if exc.errno == errno.ENAMETOOLONG
            else "too many levels of symbolic links"
        )
        raise ValueError(f"sandbox root {text!r}: {reason}") from exc
    if not os.path.isdir(real):
        what = "is not a directory" if os.path.lexists(real) else "does not exist"
        raise ValueError(f"sandbox root {text!r} {what}")
    return real


def canonical(path: str) -> str:
    """The absolute path `path` names once every symlink is followed, dangling ones included.

    A missing tail is kept as spelled (``..`` after a missing component is then taken
    lexically, where the kernel would fail with ENOENT), so the result is where an
    operation would land if it succeeded. `path` must be absolute.

    Raises:
        OSError: ELOOP when resolving it needs more links than the kernel follows (a loop, or
            a long chain), ENAMETOOLONG when it is longer than the kernel accepts: no
            operation could land anywhere, and no answer is guessed.
    """
    # The fence re-checks target keys, which were canonical when resolved: where the kernel
    # says in one call that no link lies on the way now, the key is its own answer (a link
    # swapped in since, a missing tail: the walk decides, as everywhere else).
    if still_real(path):
        return path
    return real_path(path, strict=True)


def is_within(path: str, root: str) -> bool:
    """Whether canonical `path` is canonical `root` itself or lies below it, by components.

    Canonical paths (what `realpath` and the kernel's ``/proc/self/fd`` give) have no empty,
    ``.`` or ``..`` components, so "`root` plus a separator is a prefix" is exactly
    "`root`'s components are a prefix": ``/srv/root-evil`` does not start with ``/srv/root/``.
    (A `PurePosixPath` comparison does the same at several times the cost, three times per
    read.)
    """
    if path == root:
        return True
    return path.startswith(root if root.endswith("/") else root + "/")


def within_any(path: str, roots: Sequence[str]) -> bool:
    """Whether canonical `path` lies inside (or is) one of the canonical `roots`."""
    return any(is_within(path, root) for root in roots)
