"""The ignore rules ripgrep's grep is given: read by dsh-fs, never by ripgrep itself.

ripgrep opens ``.gitignore``, ``.ignore`` and ``.rgignore`` files blindly (a FIFO hangs it,
a link to ``/dev/zero`` grows it without bound, a link out of the fence decides what it
shows; ripgrep 14.1.0 has no option to skip them but ``--no-ignore``). So it runs with
``--no-ignore`` and one ``--ignore-file``: a copy of the rules dsh-fs vetted. The ignore
files below the root are found by a walk of names here (`IgnoreListings`: one ``scandir``
per directory, none for a directory without subdirectories, not into a directory a
plain-name rule ignores), so that ripgrep walks the tree once, to search; the walk keeps
each directory's identity and timestamps (and those of the ignore files whose rules kept
it out of a directory), and a later grep of the same root that finds every one unchanged
(one ``lstat`` each, no directory read) reuses the names it found. However they were
found, each is read only if it is a regular file (opened non-blocking and checked by
``fstat``, never a FIFO or a device; a symbolic link is not followed), through the
provider's guards (its kernel path inside the fence), up to `IGNORE_FILE_BYTES`. Above the
root, the parent directories' ignore files count as far up as the guards let the search
see, read the same way. Each file's rules are rewritten relative to the directory ripgrep
runs in (the farthest parent with rules, or the root), deeper files after shallower ones
and, in one directory, ``.rgignore`` after ``.ignore`` after ``.gitignore`` (the last
matching rule wins: the precedence ripgrep gives them). ``.gitignore`` counts only inside
a git work tree.
"""

from __future__ import annotations

import os
import re
import stat as st_mode
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from dsh_fs._platform import links_count_subdirectories
from dsh_fs.errors import FsError

from ._guards import LocalGuards
from ._open import open_regular

__all__ = [
    "IGNORE_FILES",
    "IGNORE_FILE_BYTES",
    "LISTED_DIRECTORIES",
    "SETTLED_NS",
    "IgnoreListing",
    "IgnoreListings",
    "IgnorePlan",
    "Reader",
    "ignore_plan",
    "list_ignore_files",
    "read_ignore_file",
    "rebased",
]

IGNORE_FILES: tuple[str, ...] = (".gitignore", ".ignore", ".rgignore")
"""Ignore files, weakest first."""

IGNORE_FILE_BYTES = 1 << 20
"""An ignore file larger than this is not read (as in the pure engine)."""

_SPECIAL = frozenset("\\*?[]!#{}")
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK

LISTED_DIRECTORIES = 50_000
"""A walk that reads more directories than this keeps no listing (its proof would cost
memory: a path and four numbers a directory); the next grep walks again."""

SETTLED_NS = 2_000_000_000
"""A directory modified less than this before a walk began may change again within the
same tick of the filesystem's clock without its timestamp moving: a walk that meets one
keeps no listing."""

_KEPT_ROOTS = 8
"""Roots whose listing a provider keeps (the oldest kept is dropped first)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IgnoreListing:
    """The ignore files below a root that a walk of names found, and the proof that the
    tree still holds exactly those: each directory the walk read, as it was before it was
    read. A name can only come or go in a directory whose modification time moves (and
    its change time, which no one can set back), and a directory swapped for another, a
    link or a mount point is another inode; so when every one is as recorded, no ignore
    file appeared, went or moved, and the walk need not be made again."""

    found: tuple[str, ...]
    """The ignore files' paths relative to the root."""
    directories: tuple[tuple[str, int, int, int, int], ...]
    """Each directory walked (relative path, ``""`` for the root), with its device, inode,
    modification and change times (ns) as the walk found them."""
    files: tuple[tuple[str, int, int, int, int], ...] = ()
    """The ignore files whose rules kept the walk out of directories (`list_ignore_files`),
    as the walk read them: a change to one (its times move) could let ripgrep into a
    directory the walk skipped."""

    def unchanged(self, root: str) -> bool:
        """Whether every directory below `root` is still as recorded (one ``lstat`` each,
        no directory read). Blocking."""
        try:
            fd = os.open(root, _OPEN_DIR)
        except (OSError, ValueError):
            return False
        stat = os.stat
        try:
            for rel, device, inode, modified, changed in self.directories + self.files:
                info = stat(rel or ".", dir_fd=fd, follow_symlinks=False)
                if (
                    info.st_mtime_ns != modified
                    or info.st_ctime_ns != changed
                    or info.st_ino != inode
                    or info.st_dev != device
                ):
                    return False
        except (OSError, ValueError):
            return False
        finally:
            os.close(fd)
        return True


def list_ignore_files(
    root: str, clock: Callable[[], int] = time.time_ns, read: Reader | None = None
) -> tuple[list[str], IgnoreListing | None]:
    """The ignore files below the real directory `root` that grep's walk can meet, found by
    reading directories: hidden directories and links are not descended into (as ripgrep
    walks; an ignore file's own name is hidden, and counts in a directory that is not).
    With them, the listing that proves them later, or None when a directory (or an ignore
    file read) changed too recently (`SETTLED_NS` by `clock`) or there are too many
    (`LISTED_DIRECTORIES`). Blocking.

    With `read` (the grep's own vetted reader), the ignore files met on the way are read,
    and a directory ripgrep is sure to skip is not entered (`_Skips`): an ignore file below
    it could only speak of what is below it, which ripgrep never searches. Without it, no
    file is opened and every directory is read.

    One thread walks, depth first: CPython gives the GIL back around each entry a
    ``scandir`` reads, so threads sharing a walk hand the GIL over at every name, and on the
    bench tree (1,772 directories, 52,000 names) two or four of them took 58-70 ms of CPU
    and 61-66 ms of wall time where one takes 38 ms of each (load ~7)."""
    began = clock()
    try:
        top = os.open(root, _OPEN_DIR)
    except (OSError, ValueError):
        return [], None
    walk = _Walk(root, read)
    try:
        device = os.fstat(top).st_dev
        if links_count_subdirectories(device):
            walk.leaves = device
        # A root with a line break: the plan drops every rule below it (no rule can name
        # its directories), so none can keep the walk out of one.
        skipping = read is not None and "\n" not in root and "\r" not in root
        stack: list[tuple[str, _Skips | None]] = [("", _NO_SKIPS if skipping else None)]
        while stack:
            head, skips = stack.pop()
            _read_directory(top, head, skips, began, walk, stack)
    finally:
        os.close(top)
    if not walk.keep:
        return walk.found, None
    listing = IgnoreListing(
        found=tuple(walk.found), directories=tuple(walk.directories), files=tuple(walk.files)
    )
    return walk.found, listing


Reader = Callable[[str], "tuple[bytes, os.stat_result] | None"]
"""An ignore file's content and the ``fstat`` of what was read, by its real path, as a
grep reads it (`ignore_plan`'s vetting: a regular file, the guards, `IGNORE_FILE_BYTES`);
None when it does not count."""

_PLAIN_NAME = re.compile(rb"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*/?")
"""A rule that names a file or directory by its whole name at any depth below its ignore
file's directory (``node_modules/``, ``build``, ``target/``): no glob, no anchor, no space."""


@dataclass(frozen=True, slots=True)
class _Skips:
    """The directory names ripgrep is sure to skip below a directory: a plain-name rule of
    an ignore file there or above, below the root (``.gitignore`` only inside a git work
    tree), and no negation in any ignore file there or above (a ``!`` rule could take a
    name back; one turns skipping off below it, as does an ignore file that can't be
    read)."""

    names: frozenset[str]
    """Names matched by plain-name rules."""
    in_git: bool
    """Whether a ``.git`` was seen in the directory or above (below the root)."""
    files: tuple[tuple[str, int, int, int, int], ...]
    """The ignore files read there and above, as `IgnoreListing.files` keeps them: what a
    directory skipped rests on."""


_NO_SKIPS = _Skips(frozenset(), in_git=False, files=())


class _Walk:
    """What a walk of names found."""

    __slots__ = ("directories", "files", "found", "keep", "leaves", "read", "root")

    def __init__(self, root: str, read: Reader | None) -> None:
        self.root = root
        """The real directory walked."""
        self.leaves = -1
        """The device (the root's) whose directories' link counts say whether they have
        subdirectories (`links_count_subdirectories`); -1: none."""
        self.read = read
        """The reader of ignore files (None: none is read, nothing is skipped)."""
        self.files: list[tuple[str, int, int, int, int]] = []
        """The ignore files a skipped directory rests on, as `IgnoreListing.files` keeps
        them."""
        self.found: list[str] = []
        """Ignore files (paths relative to the root)."""
        self.directories: list[tuple[str, int, int, int, int]] = []
        """Directories read, as `IgnoreListing.directories` keeps them."""
        self.keep = True
        """Whether the directories read prove the names (none changed too recently, none
        failed to be read, not too many)."""

    def rest_on(self, files: tuple[tuple[str, int, int, int, int], ...], began: int) -> None:
        """A directory was skipped for the rules of `files`: the listing holds while they
        do (none may have changed too recently: a same-tick rewrite could hide)."""
        for record in files:
            if record not in self.files:
                self.files.append(record)
                if began - record[3] < SETTLED_NS:
                    self.keep = False


def _read_directory(
    top: int,
    head: str,
    skips: _Skips | None,
    began: int,
    walk: _Walk,
    below: list[tuple[str, _Skips | None]],
) -> None:
    """Read the directory `head` into `walk`; its subdirectories to walk go to `below`,
    but for those `skips` (what ripgrep skips below `head`'s parent, None: nothing) and
    `head`'s own ignore files say ripgrep skips."""
    try:
        # A directory above `head` swapped for a link since it was read can only add names
        # here (as it could to ripgrep's own listing): the plan reads none but through the
        # guards.
        fd = os.open(head or ".", _OPEN_DIR, dir_fd=top)
    except (OSError, ValueError):
        walk.keep = False  # gone, or not readable: ripgrep can't walk it either
        return
    ignore_files: list[str] = []
    subdirectories: list[str] = []
    git = False
    try:
        # Its times are taken before its names are read: a name added after them moves them.
        info = os.fstat(fd)
        if walk.keep:
            if began - info.st_mtime_ns < SETTLED_NS or len(walk.directories) >= LISTED_DIRECTORIES:
                walk.keep = False
                walk.directories.clear()
            else:
                walk.directories.append(
                    (head, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
                )
        if info.st_nlink == 2 and info.st_dev == walk.leaves:
            # No subdirectory (its link count is its name and its "."): its ignore files
            # are asked for by name, and the names it holds (often most of a tree's) are
            # not read. Its times, taken above, prove this as they prove a read.
            ignore_files = [name for name in IGNORE_FILES if _exists(name, fd)]
        else:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("."):  # hidden: ripgrep's grep never enters it
                        if name in IGNORE_FILES:
                            ignore_files.append(name)
                        git = git or name == ".git"
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):  # a link is not followed
                            subdirectories.append(name)
                    except OSError:
                        continue
    except OSError:
        walk.keep = False
    finally:
        os.close(fd)
    prefix = f"{head}/" if head else ""
    walk.found += [prefix + name for name in ignore_files]
    if not subdirectories:
        return
    if skips is not None and ignore_files:
        skips = _skips_below(walk.root, head, skips, git, ignore_files, walk.read)
    elif skips is not None and git:
        skips = _Skips(skips.names, in_git=True, files=skips.files)
    for name in subdirectories:
        if skips is not None and name in skips.names:
            walk.rest_on(skips.files, began)
        else:
            below.append((prefix + name, skips))


def _exists(name: str, fd: int) -> bool:
    """Whether `name` is in the directory open as `fd`, whatever it is (a link is not
    followed); with the process's effective ids, as it would be opened."""
    return os.access(name, os.F_OK, dir_fd=fd, effective_ids=True, follow_symlinks=False)


def _skips_below(
    root: str, head: str, skips: _Skips, git: bool, ignore_files: list[str], read: Reader | None
) -> _Skips | None:
    """What ripgrep skips below `head`, given what it skips below its parent (`skips`), a
    ``.git`` in it (`git`) and its ignore files (read with `read`)."""
    assert read is not None
    if "\n" in head or "\r" in head:
        return None  # the plan drops this directory's rules: no rule can name it
    in_git = skips.in_git or git
    names = set(skips.names)
    files = list(skips.files)
    for name in IGNORE_FILES:
        if name not in ignore_files:
            continue
        rel = f"{head}/{name}" if head else name
        found = read(f"{root}/{rel}")
        if found is None:
            return None  # not read now (a FIFO, too large…): what it may say later is unknown
        data, info = found
        files.append((rel, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
        counts = name != ".gitignore" or in_git
        for raw in data.splitlines():
            line = raw.rstrip(b"\r")
            if line.startswith(b"!"):
                return None  # a negation could take a name back (even in a file not counted)
            if counts and _PLAIN_NAME.fullmatch(line):
                names.add(line.rstrip(b"/").decode("ascii"))
    return _Skips(frozenset(names), in_git=in_git, files=tuple(files))


class IgnoreListings:
    """A provider's last listing of each root it grepped (a few roots): a grep reuses one
    its directories still prove (`IgnoreListing.unchanged`), else walks again. Whatever the
    listing says, every ignore file it names is vetted again by the grep that uses it
    (`ignore_plan`), and ripgrep never opens one: a listing can only decide which vetted
    rules apply, never what is opened."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._kept: dict[str, IgnoreListing] = {}
        self._clock = clock
        # Greps run their walks in worker threads, some at once: the book is shared.
        self._lock = threading.Lock()

    def found(self, root: str, read: Reader | None = None) -> list[str]:
        """The ignore files below the real directory `root` (see `list_ignore_files`).
        Blocking."""
        with self._lock:
            listing = self._kept.get(root)
        if listing is not None and listing.unchanged(root):
            return list(listing.found)
        found, listing = list_ignore_files(root, self._clock, read)
        with self._lock:
            self._kept.pop(root, None)
            if listing is not None:
                if len(self._kept) >= _KEPT_ROOTS:
                    del self._kept[next(iter(self._kept))]
                self._kept[root] = listing
        return found


@dataclass(frozen=True, slots=True)
class IgnorePlan:
    """Where ripgrep runs, what it searches there, and the rules it is given."""

    cwd: str
    """The directory ripgrep runs in: the root, or its farthest parent with rules."""
    lead: str
    """The root relative to `cwd` (``""`` when it is the root)."""
    rules: bytes
    """The ``--ignore-file`` content (empty: no rules)."""


def ignore_plan(root: str, display: str, guards: LocalGuards, found: list[str]) -> IgnorePlan:
    """The plan for a grep below the real directory `root`, given the ignore files
    `found` below it (relative paths, as `IgnoreListings.found` gives them). Blocking."""
    ancestors: list[tuple[str, dict[str, bytes], bool]] = []  # (path, texts, has .git)
    current = root
    while True:
        parent = os.path.dirname(current)
        if parent == current or (guards.confined and not guards.may_see(parent)):
            break
        texts = {
            name: data
            for name in IGNORE_FILES
            if (data := _read(parent, name, display, guards)) is not None
        }
        ancestors.append((parent, texts, os.path.lexists(os.path.join(parent, ".git"))))
        current = parent
    in_git_above = False
    kept_above: list[tuple[str, dict[str, bytes]]] = []
    for path, texts, has_git in reversed(ancestors):  # farthest first
        in_git_above = in_git_above or has_git
        usable = {k: v for k, v in texts.items() if k != ".gitignore" or in_git_above}
        if any(usable.values()):
            kept_above.append((path, usable))
    cwd = kept_above[0][0] if kept_above else root
    lead = os.path.relpath(root, cwd) if cwd != root else ""
    lines: list[bytes] = []
    for path, texts in kept_above:
        _add(lines, os.path.relpath(path, cwd) if path != cwd else "", texts)
    by_directory: dict[str, list[str]] = {}
    for rel in found:
        head, _, name = rel.rpartition("/")
        if name in IGNORE_FILES:
            by_directory.setdefault(head, []).append(name)
    git: dict[str, bool] = {}
    for head in sorted(by_directory, key=lambda path: path.split("/")):
        names = by_directory[head]
        in_git = in_git_above or _in_git(root, head, git)
        texts = {}
        for name in IGNORE_FILES:
            if name in names and (name != ".gitignore" or in_git):
                data = _read(os.path.join(root, head) if head else root, name, display, guards)
                if data is not None:
                    texts[name] = data
        base = "/".join(part for part in (lead, head) if part)
        _add(lines, base, texts)
    return IgnorePlan(cwd=cwd, lead=lead, rules=b"".join(line + b"\n" for line in lines))


def _in_git(root: str, head: str, cache: dict[str, bool]) -> bool:
    """Whether `head` (relative to `root`) or a directory between it and the root has
    ``.git`` (its existence only: nothing is opened)."""
    verdict = cache.get(head)
    if verdict is None:
        here = os.path.lexists(os.path.join(root, head, ".git") if head else f"{root}/.git")
        verdict = here or (bool(head) and _in_git(root, head.rpartition("/")[0], cache))
        cache[head] = verdict
    return verdict


def _read(directory: str, name: str, display: str, guards: LocalGuards) -> bytes | None:
    """An ignore file's content, if it is a regular file the guards let be opened and not
    larger than `IGNORE_FILE_BYTES`; else None (nothing of it counts)."""
    read = read_ignore_file(os.path.join(directory, name), display, guards)
    return None if read is None else read[0]


def read_ignore_file(
    path: str, display: str, guards: LocalGuards
) -> tuple[bytes, os.stat_result] | None:
    """The content of the ignore file at the real `path`, with the ``fstat`` of what was
    read, if it is a regular file the guards let be opened and not larger than
    `IGNORE_FILE_BYTES`; else None (nothing of it counts). A `Reader`."""
    try:
        if not st_mode.S_ISREG(os.lstat(path).st_mode):
            return None  # a link is never followed (as ripgrep lists files: `rg --files`)
        opened = open_regular(path, "search", display, guards)
    except (FsError, OSError, ValueError):
        return None
    try:
        if opened.info.st_size > IGNORE_FILE_BYTES or not guards.may_see(opened.path):
            return None
        data = os.read(opened.fd, IGNORE_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(opened.fd)
    return (data, opened.info) if len(data) <= IGNORE_FILE_BYTES else None


def _add(lines: list[bytes], base: str, texts: dict[str, bytes]) -> None:
    """The rules of the ignore files of directory `base` (relative to ripgrep's directory),
    weakest file first, rewritten relative to that directory."""
    if "\n" in base or "\r" in base:
        return  # no rule can name it: its files' rules are left out
    prefix = "".join("\\" + char if char in _SPECIAL else char for char in base).encode(
        "utf-8", "surrogateescape"
    )
    for name in IGNORE_FILES:
        data = texts.get(name)
        if not data:
            continue
        for raw in data.splitlines():
            line = raw.rstrip(b"\r") if raw.endswith(b"\r") else raw
            if not line.strip() or line.startswith(b"#"):
                continue
            lines.append(_rebased(line, prefix) if prefix else line)


def _rebased(line: bytes, prefix: bytes) -> bytes:
    """A gitignore rule of the directory `prefix` as a rule of ripgrep's directory."""
    negated = line.startswith(b"!")
    body = line[1:] if negated else line
    anchored = b"/" in (body[:-1] if body.endswith(b"/") else body)
    rebased = prefix + b"/" + body.lstrip(b"/") if anchored else prefix + b"/**/" + body
    return (b"!" if negated else b"") + rebased


def rebased(line: str, base: str) -> str:
    """A gitignore `line` of the directory `base` (relative to ripgrep's directory) as a
    rule of ripgrep's directory."""
    prefix = "".join("\\" + char if char in _SPECIAL else char for char in base)
    encoded = _rebased(
        line.encode("utf-8", "surrogateescape"), prefix.encode("utf-8", "surrogateescape")
    )
    return encoded.decode("utf-8", "surrogateescape")
