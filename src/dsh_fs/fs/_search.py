"""The vocabulary of native search: what a provider with a fast searcher of its own is asked.

A provider may answer `FileSystem.native_grep` and `FileSystem.native_glob` itself (the local
provider runs ripgrep); one that does not returns None and the tools search with `walk` and
reads. Either way the results must be the same, so these values say exactly what is asked.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VCS_DIRECTORIES", "FsGlobQuery", "FsGrepHit", "FsGrepQuery", "NativeSearchAbandoned"]

VCS_DIRECTORIES: tuple[str, ...] = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
"""Version-control metadata directories: never searched, listed or descended into."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsGrepQuery:
    """Find the lines of text files under a directory that a regular expression matches.

    What is searched, as ripgrep does by default: regular files reached without following a
    symbolic link; not hidden ones (a name starting with ``.``) nor anything under a hidden
    directory; not what ``.gitignore`` (inside a git work tree), ``.ignore`` or
    ``.rgignore`` files of the directory or its parents exclude; not `VCS_DIRECTORIES`; not
    binary files (a NUL byte anywhere: none of their lines is reported).
    """

    pattern: str
    """A ripgrep (Rust syntax) regular expression, case-sensitive; the caller has checked it.
    Lines are matched one at a time, without their terminator."""
    include: str | None = None
    """One glob matched against file names only (``*.py``, ``*.{ts,tsx}``): it narrows the
    files searched, never adds one."""
    line_bytes: int = 2000
    """A reported line keeps at most this many bytes."""
    excluded: tuple[str, ...] = ()
    """Gitignore lines, relative to the searched directory, of paths never to open (a
    wrapper that hides them passes its denied ones: `PathRules.excluded_below`); the
    wrapper still filters what comes back, so a searcher may ignore them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsGrepHit:
    """One matching line."""

    path: str
    """The file's path relative to the searched directory, components joined with ``/``."""
    line_number: int
    """1-based."""
    line: bytes
    """The line without its terminator (``\\n``, and a ``\\r`` just before it), cut to
    `FsGrepQuery.line_bytes` bytes (possibly inside a UTF-8 sequence)."""
    truncated: bool = False
    """Whether `line` was cut."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsGlobQuery:
    """Find the regular files under a directory whose relative path a glob matches.

    Hidden and ignored files are included; symbolic links are never followed nor reported;
    nothing under `VCS_DIRECTORIES` is.
    """

    pattern: str
    """A ripgrep ``--glob`` (gitignore syntax plus ``{a,b}``): without a ``/`` it matches
    the file name at any depth, with one it matches the path from the searched directory."""
    excluded: tuple[str, ...] = ()
    """Gitignore lines, relative to the searched directory, of paths never to list (as
    `FsGrepQuery.excluded`)."""


class NativeSearchAbandoned(Exception):
    """A provider's own searcher stopped before the end for a reason of its own, not the
    caller's (ripgrep reaching its memory bound on a very long line): the hits it gave are
    to be dropped and the search made again with `walk` and reads, whose memory is bounded.
    Raised while iterating a `FileSystem.native_grep` batch stream."""
