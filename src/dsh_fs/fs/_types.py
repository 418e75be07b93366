"""The provider vocabulary: targets, versions, infos, write guards, edits and outcomes.

Every value is immutable. `FsTargetKey` and `FsVersion` are opaque: consumers store and
compare them, and nothing outside the provider that minted them interprets them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NewType, TypeAlias

from ._encoded import TextLike, text_of

if TYPE_CHECKING:
    from ._encodings import FsDecoded

__all__ = [
    "BEFORE_LIMIT",
    "Absent",
    "CreateIfAbsent",
    "FsCapabilities",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsDirListing",
    "FsEdit",
    "FsEditOutcome",
    "FsEditRequest",
    "FsFileType",
    "FsInfo",
    "FsInsertRequest",
    "FsMkdirOutcome",
    "FsMoveOutcome",
    "FsPatchHunk",
    "FsPatchRequest",
    "FsPathInfo",
    "FsSmallRead",
    "FsTarget",
    "FsTargetKey",
    "FsVersion",
    "FsWalkEntry",
    "FsWriteOutcome",
    "Observation",
    "PatchOp",
    "Present",
    "ReplaceIfVersion",
    "WriteGuard",
]

FsTargetKey = NewType("FsTargetKey", str)
"""Opaque identity of a file: two paths to the same file (e.g. via a symlink) share it."""

FsVersion = NewType("FsVersion", str)
"""Opaque token for one state of a file's content; equal tokens mean "unchanged"."""


class FsFileType(str, enum.Enum):
    """What a path names."""

    FILE = "file"
    DIRECTORY = "directory"
    SYMLINK = "symlink"
    """Only from `lstat`: `stat` follows links."""
    OTHER = "other"
    """FIFOs, sockets, devices, and anything else that is not a regular file or directory."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True, kw_only=True)
class FsTarget:
    """A resolved path: what the provider works on, and what the model is shown."""

    target_key: FsTargetKey
    """Opaque identity (for the local provider, the real path)."""
    display_path: str
    """The path as the model and the UI see it (for the local provider, the absolute path
    as spelled, symlinks not followed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsInfo:
    """What `stat` knows about an existing target. Never content."""

    version: FsVersion
    """The current version token."""
    type: FsFileType
    """`FILE`, `DIRECTORY` or `OTHER` (never `SYMLINK`: stat follows links)."""
    size: int
    """Size in bytes."""
    mtime_ns: int | None = None
    """Modification time in nanoseconds since the epoch, when the backend has one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsSmallRead:
    """What `FileSystem.read_small` found: the target's `stat`, and its text when it is a
    small regular file."""

    info: FsInfo
    """The stat (of the file as it was read, when it was)."""
    decoded: FsDecoded | None
    """Its whole text and encoding; None when it is not a regular file, or is larger than
    asked for: then nothing was read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsPathInfo:
    """What `lstat` knows about a path itself, without following a final symlink."""

    display_path: str
    """The path as resolved for display."""
    type: FsFileType
    """May be `SYMLINK`."""
    size: int
    """Size in bytes (of the link itself for a symlink)."""
    link_target: str | None = None
    """For a symlink, what it points to (as stored in the link)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsDirEntry:
    """One direct child in a directory listing: metadata only."""

    name: str
    """The child's name (no separators)."""
    type: FsFileType
    """From `lstat` of the child: symlinks are reported as `SYMLINK`."""
    size: int
    """Size in bytes."""
    mtime_ns: int | None = None
    """Modification time in nanoseconds since the epoch (of the link itself for a symlink),
    when the backend has one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsDirListing:
    """The first children of a directory in name order, and how many it has."""

    entries: tuple[FsDirEntry, ...]
    """The first children by name, as `FileSystem.list_dir` gives them."""
    total: int
    """How many children the directory has."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsWalkEntry:
    """One entry found by `FileSystem.walk`: metadata only, symbolic links never followed."""

    path: str
    """The entry's path relative to the walk's root, components joined with ``/`` (no
    leading ``./``)."""
    type: FsFileType
    """As `lstat` sees it: a symbolic link is `SYMLINK`, whatever it points to."""
    size: int
    """Size in bytes; 0 for a directory or a symbolic link (only files are ever read)."""
    mtime_ns: int | None = None
    """A file's modification time in nanoseconds since the epoch, when the backend has one
    (None for directories and links)."""

    @property
    def name(self) -> str:
        """The last component of `path`."""
        return self.path.rpartition("/")[2]


@dataclass(frozen=True, slots=True)
class CreateIfAbsent:
    """Write guard: create the file only; if it exists (even if it appears mid-write),
    fail with `FS_NOT_OBSERVED`. Publication itself never replaces."""


@dataclass(frozen=True, slots=True)
class ReplaceIfVersion:
    """Write guard: replace the file only if it exists at `version`, else `FS_STALE_VERSION`."""

    version: FsVersion
    """The version the writer last observed."""
    content: bytes | None = field(default=None, compare=False, repr=False)
    """The file's bytes at `version`, as the writer read them, when it has them (a change
    set's staging): a provider that must look at the content to tell whether the file is
    still at `version` (a timestamp too coarse to tell, a touch) may compare these bytes
    instead of hashing the file. Never weaker: a file that does not hold them is not at
    `version`."""


WriteGuard: TypeAlias = CreateIfAbsent | ReplaceIfVersion
"""The `expected` argument of `write_text` (None means unconditional)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsEditRequest:
    """A literal replacement. Matching is on LF-normalized text (SPEC §3)."""

    old_string: str
    """The text to find; non-empty."""
    new_string: str
    """The replacement; empty deletes the match."""
    replace_all: bool = False
    """Replace every occurrence; otherwise exactly one occurrence is required."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsInsertRequest:
    """Insert text as whole lines after line `line` (0: before the first line).

    Lines are counted as `read` counts them. The text is inserted as lines: each of its
    lines ends with the file's dominant line ending, and a final line without a newline in
    the file gets one before text inserted after it.
    """

    line: int
    """The line the text goes after: 0 to the file's number of lines."""
    text: str
    """The text to insert; a trailing newline inserts an empty line after it."""


PatchOp: TypeAlias = Literal[" ", "-", "+"]
"""One line of a hunk: kept context (`` ``), removed (``-``) or added (``+``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsPatchHunk:
    """One located change of a patch: the old lines (context and removed, in order) must
    match the file exactly (line endings aside); they become the new lines (context and
    added, in order)."""

    anchors: tuple[str, ...] = ()
    """Lines to find first, in order, each after the previous one (a patch's ``@@``
    headers: the line as written, or as written once surrounding white space is set
    aside); the hunk is then looked for after the last of them."""
    lines: tuple[tuple[PatchOp, str], ...]
    """The hunk's lines, without line endings."""
    at_end: bool = False
    """The old lines must be the last lines of the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsPatchRequest:
    """Several hunks applied together, all or nothing, in file order: each is located at
    the first exact match after the previous one. Any hunk that does not match fails the
    whole request and changes nothing."""

    hunks: tuple[FsPatchHunk, ...]
    """The hunks, in file order; at least one."""


FsEdit: TypeAlias = FsEditRequest | FsInsertRequest | FsPatchRequest
"""What `edit_text` applies inside its critical section."""


BEFORE_LIMIT = 16 * 1024 * 1024
"""A write's outcome carries the prior text only for files up to this many bytes (else
`FsWriteOutcome.before` is None): a write never needs the old content, only reports it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsWriteOutcome:
    """What a successful `write_text` did."""

    operation: Literal["create", "update"]
    """Whether the file was created or replaced."""
    version: FsVersion
    """The version after publication (safe to guard the next mutation with)."""
    before: str | None
    """The prior text; None for a create, or when the prior file was larger than
    `BEFORE_LIMIT`, not text, or not the provider's to reveal."""
    after: str
    """The text now in the file."""


class FsEditOutcome:
    """What a successful `edit_text` did (immutable).

    A provider may hand `before` and `after` over as `EncodedText`: they are decoded on first
    access, so a caller that never reads them (a model loop) never holds them as `str`.
    """

    __slots__ = ("_after", "_before", "replacements", "version")

    version: FsVersion
    """The version after publication."""
    replacements: int
    """How many occurrences were replaced (1 unless `replace_all`); for an insert 1, for a
    patch the number of hunks."""
    _before: TextLike
    _after: TextLike

    def __init__(
        self, *, version: FsVersion, before: TextLike, after: TextLike, replacements: int
    ) -> None:
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "_before", before)
        object.__setattr__(self, "_after", after)
        object.__setattr__(self, "replacements", replacements)

    @property
    def before(self) -> str:
        """The text before the edit."""
        return text_of(self._before)

    @property
    def after(self) -> str:
        """The text after the edit."""
        return text_of(self._after)

    @property
    def lazy_before(self) -> TextLike:
        """`before` as held (`str`, or `EncodedText` not decoded yet): pass it on as is."""
        return self._before

    @property
    def lazy_after(self) -> TextLike:
        """`after` as held (`str`, or `EncodedText` not decoded yet): pass it on as is."""
        return self._after

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FsEditOutcome is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FsEditOutcome):
            return NotImplemented
        return (self.version, self.replacements, self.before, self.after) == (
            other.version,
            other.replacements,
            other.before,
            other.after,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"FsEditOutcome(version={self.version!r}, before={self._before!r}, "
            f"after={self._after!r}, replacements={self.replacements!r})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FsDeleteOutcome:
    """What a successful `delete` did."""

    version: FsVersion
    """The version of the file that was removed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsMoveOutcome:
    """What a successful `move` did."""

    type: FsFileType
    """What was moved: a `FILE`, a `DIRECTORY` or a `SYMLINK` (the link itself)."""
    version: FsVersion | None
    """The destination's version after the move, for a file (None for a directory or a
    link: nothing to guard later)."""
    replaced: bool = False
    """The destination was a file, replaced."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsMkdirOutcome:
    """What a successful `mkdir` did."""

    created: bool
    """False when the directory already existed (a success all the same)."""


@dataclass(frozen=True, slots=True)
class Present:
    """Observation: the file existed at `version`."""

    version: FsVersion
    """The observed version."""


@dataclass(frozen=True, slots=True)
class Absent:
    """Observation: nothing existed at the path."""


Observation: TypeAlias = Present | Absent
"""What `fs/observed` records."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsCapabilities:
    """What a provider supports; the conformance suite reads these instead of isinstance."""

    symlinks: bool = False
    """Symbolic links exist and resolve to their target's identity."""
    special_files: bool = False
    """FIFOs, sockets and devices can exist (and must be refused without blocking)."""
    posix_modes: bool = False
    """Files carry POSIX permission bits, kept across replacement."""
    cross_process_guards: bool = False
    """Guarded mutations hold against other processes using the same provider."""
    directories: bool = True
    """Directories are real objects (object stores have only prefixes)."""
    content_versions: bool = False
    """`stream_text_from` may vouch for the version it streams (`FsTextStream.version`): a
    vouched version changes whenever the bytes do, so a consumer may reuse what it derived
    from them (a line index) while `stat` reports that version."""
    read_only: bool = False
    """Every mutation is refused (a read-only sandbox): whoever offers changes (the dialect
    adapters) offers none."""
    local_reads: bool = False
    """Reads are served by this machine (a local disk and its page cache): their cost is
    CPU, so several in flight together only contend for the interpreter's lock. False: a
    read may wait on a network round trip (an object store), and a caller with several
    files to read overlaps those waits."""
