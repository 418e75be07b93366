"""The ignore rules ripgrep's grep is given: read by dsh-fs, never by ripgrep itself.

ripgrep opens ``.gitignore``, ``.ignore`` and ``.rgignore`` files blindly (a FIFO hangs it,
a link to ``/dev/zero`` grows it without bound, a link out of the fence decides what it
shows). So it runs with ``--no-ignore`` and one ``--ignore-file``: a copy of the rules
dsh-fs vetted. The ignore files below the root are found by a walk of names here (one
``scandir`` per directory, no file opened to find them; ripgrep walks the tree once, to
search), which descends as ripgrep's search will: not into hidden directories, not through
links, and not into a directory the rules found on the way plainly ignore (a name rule such
as ``node_modules/`` with no negation in force), whose ignore files ripgrep would never
read. Each is read only if it is a regular file (opened non-blocking and
checked by ``fstat``, never a FIFO or a device; a symbolic link is not followed), through
the provider's guards (its kernel path inside the fence), up to `IGNORE_FILE_BYTES`.
Above the root, the parent directories'
ignore files count as far up as the guards let the search see, read the same way. Each
file's rules are rewritten relative to the directory ripgrep runs in (the farthest parent
with rules, or the root), deeper files after shallower ones and, in one directory,
``.rgignore`` after ``.ignore`` after ``.gitignore`` (the last matching rule wins: the
precedence ripgrep gives them). ``.gitignore`` counts only inside a git work tree.
"""

from __future__ import annotations

import os
import stat as st_mode
from dataclasses import dataclass
from fnmatch import fnmatchcase

from dsh_fs.errors import FsError

from ._guards import LocalGuards
from ._open import open_regular

__all__ = ["IGNORE_FILES", "IGNORE_FILE_BYTES", "IgnorePlan", "ignore_plan", "rebased"]

IGNORE_FILES: tuple[str, ...] = (".gitignore", ".ignore", ".rgignore")
"""Ignore files, weakest first."""

IGNORE_FILE_BYTES = 1 << 20
"""An ignore file larger than this is not read (as in the pure engine)."""

_SPECIAL = frozenset("\\*?[]!#{}")
_NOT_PLAIN = frozenset("\\[]{}!# \t")
_NOTED = frozenset((*IGNORE_FILES, ".git"))


@dataclass(frozen=True, slots=True)
class IgnorePlan:
    """Where ripgrep runs, what it searches there, and the rules it is given."""

    cwd: str
    """The directory ripgrep runs in: the root, or its farthest parent with rules."""
    lead: str
    """The root relative to `cwd` (``""`` when it is the root)."""
    rules: bytes
    """The ``--ignore-file`` content (empty: no rules)."""


def ignore_plan(root: str, display: str, guards: LocalGuards) -> IgnorePlan:
    """The plan for a grep below the real directory `root`. Blocking."""
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
    pruning = _Pruning()
    for path, texts in kept_above:
        _add(lines, os.path.relpath(path, cwd) if path != cwd else "", texts)
        # A parent's anchored rules name its own children, never a directory below the root.
        pruning, _ = pruning.below(texts)
    below = _below(root, display, guards, in_git_above, pruning)
    for head, texts in sorted(below, key=lambda item: item[0].split("/")):
        base = "/".join(part for part in (lead, head) if part)
        _add(lines, base, texts)
    return IgnorePlan(cwd=cwd, lead=lead, rules=b"".join(line + b"\n" for line in lines))


def _below(
    root: str, display: str, guards: LocalGuards, in_git: bool, pruning: _Pruning
) -> list[tuple[str, dict[str, bytes]]]:
    """The vetted ignore files of each directory below `root` that ripgrep's search can
    walk into (relative paths, ``""`` for the root), found by reading directories, not by
    opening any file: hidden names and links are not descended into (as ripgrep's grep
    walks), nor a directory the rules found on the way ignore by name (`_Pruning`)."""
    found: list[tuple[str, dict[str, bytes]]] = []
    stack = [("", in_git, pruning)]
    while stack:
        head, in_git, pruning = stack.pop()
        directory = f"{root}/{head}" if head else root
        noted: set[str] = set()
        subdirectories: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("."):  # hidden: ripgrep's grep never enters it
                        if name in _NOTED:
                            noted.add(name)
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):  # a link is not followed
                            subdirectories.append(name)
                    except OSError:
                        continue
        except OSError:
            continue  # gone, or not readable: ripgrep can't walk it either
        in_git = in_git or ".git" in noted
        texts: dict[str, bytes] = {}
        for name in IGNORE_FILES:
            if name in noted and (name != ".gitignore" or in_git):
                data = _read(directory, name, display, guards)
                if data is not None:
                    texts[name] = data
        anchored = _NO_RULES
        if texts:
            found.append((head, texts))
            pruning, anchored = pruning.below(texts)
        for name in subdirectories:
            if not pruning.prunes(name, anchored):
                stack.append((f"{head}/{name}" if head else name, in_git, pruning))
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class _Rules:
    """Rules that ignore a directory by its name alone."""

    names: frozenset[str] = frozenset()
    """Literal names."""
    patterns: tuple[str, ...] = ()
    """Names with ``*`` or ``?`` (matched as a gitignore glob matches one component)."""

    def match(self, name: str) -> bool:
        """Whether one of the rules matches the directory `name`."""
        return name in self.names or any(fnmatchcase(name, p) for p in self.patterns)

    def __add__(self, other: _Rules) -> _Rules:
        return _Rules(names=self.names | other.names, patterns=self.patterns + other.patterns)


_NO_RULES = _Rules()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pruning:
    """Which directories the walk for ignore files may skip below one directory: those the
    rules in force plainly ignore, so ripgrep's search never walks into them and never
    would read their ignore files. Only rules whose meaning does not depend on how a glob
    is read count (a name, or a name with ``*`` or ``?``, with an optional leading and
    trailing ``/``); any other rule is left to ripgrep (the walk goes on: more directories
    read, never fewer than ripgrep walks). A negation in force (``!…``) could re-include a
    directory: below it nothing is skipped."""

    unanchored: _Rules = _NO_RULES
    """Rules without a leading ``/``: a directory of that name at any depth."""
    off: bool = False
    """A negation is in force: nothing is skipped."""

    def below(self, texts: dict[str, bytes]) -> tuple[_Pruning, _Rules]:
        """The pruning for the directory whose ignore files hold `texts`, and its anchored
        rules (``/name``: its own children only)."""
        unanchored: set[str] = set()
        unanchored_patterns: list[str] = []
        anchored: set[str] = set()
        anchored_patterns: list[str] = []
        negated = self.off
        for data in texts.values():
            for raw in data.splitlines():
                line = raw[:-1] if raw.endswith(b"\r") else raw
                if not line.strip() or line.startswith(b"#"):
                    continue
                if line.startswith(b"!"):
                    negated = True
                    continue
                name = _plain_name(line)
                if name is None:
                    continue
                names, patterns = (
                    (anchored, anchored_patterns)
                    if name.startswith("/")
                    else (unanchored, unanchored_patterns)
                )
                name = name.removeprefix("/")
                if "*" in name or "?" in name:
                    patterns.append(name)
                else:
                    names.add(name)
        if negated:
            return _Pruning(off=True), _NO_RULES
        own = _Rules(names=frozenset(unanchored), patterns=tuple(unanchored_patterns))
        mine = _Rules(names=frozenset(anchored), patterns=tuple(anchored_patterns))
        return _Pruning(unanchored=self.unanchored + own), mine

    def prunes(self, name: str, anchored: _Rules) -> bool:
        """Whether the subdirectory `name` is ignored (`anchored`: its parent's own
        anchored rules)."""
        return not self.off and (self.unanchored.match(name) or anchored.match(name))


def _plain_name(line: bytes) -> str | None:
    """The rule `line` as ``name`` or ``/name`` when it ignores a directory by its name
    alone (``*`` and ``?`` allowed); None for any other rule."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removesuffix("/")
    body = text.removeprefix("/")
    if not body or "/" in body or "**" in body or body != body.strip():
        return None
    if any(char in _NOT_PLAIN for char in body):
        return None
    return text


def _read(directory: str, name: str, display: str, guards: LocalGuards) -> bytes | None:
    """An ignore file's content, if it is a regular file the guards let be opened and not
    larger than `IGNORE_FILE_BYTES`; else None (nothing of it counts)."""
    path = os.path.join(directory, name)
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
    return data if len(data) <= IGNORE_FILE_BYTES else None


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
