"""The change journal's contract (SPEC §9): the capture seam a provider calls inside its
critical section, the store a backend keeps entries and pre-images in, and the entry value.

A mutation that is journaled receives an `FsCapture` from its caller (as it receives its
guard). The store makes it (`JournalStore.capture`) where the call starts, already told who
makes the change (`FsChangeMeta`), so nothing inside the critical section calls back up to
ask. Right before publication the provider hands it the replaced content (`FsChangeStart`,
with a backend-specific `FsPreImage`); the capture makes the pre-image and a pending record
durable, then the provider publishes and calls `commit` with the new version. A failure
between the two calls `abandon`. No I/O here: stores live with the providers (they touch the
disk or the bucket), the journal plugin above decides nothing and only records.
"""

from __future__ import annotations

import difflib
import enum
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ._encoded import EncodedText
from ._encodings import utf16_as_utf8
from ._types import FsTarget, FsVersion
from .messages import Verb

__all__ = [
    "ENTRY_ID",
    "ChangeKind",
    "FsCapture",
    "FsChangeMeta",
    "FsChangeStart",
    "FsPreImage",
    "JournalEntry",
    "JournalProblem",
    "JournalStore",
    "JournalUsage",
    "RestoreKind",
    "apply_delta",
    "forward_delta",
    "line_counts",
]

ENTRY_ID = re.compile(r"\A[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9a-f]{8}\Z")
"""What an entry id looks like: UTC time to the microsecond, then a random suffix (so ids
sort by time across processes, ties broken at random)."""

RestoreKind = Literal["delete", "create", "replace"]
"""What an undo does to the file: delete a created file, recreate a deleted one, or put the
replaced content back."""


class ChangeKind(enum.Enum):
    """What a change publishes, removes or moves (one explicit kind, never a set of flags)."""

    FILE = "file"
    """A regular file: its content is kept (the pre-image) and restored."""
    DIRECTORY = "directory"
    """A directory (`mkdir`, a directory's `delete` or `move`, their undos): no content; an
    undo removes it again only while it is empty, makes it again, or moves it back."""
    LINK = "link"
    """A symbolic link itself, moved (its `target` and `source` name the link)."""


class FsPreImage:
    """A backend's handle on content the journal keeps (the inode a write replaces, a
    pre-image in the store). Only the provider and the store of the same backend look
    inside."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FsChangeMeta:
    """Who makes a change and why, as the journal records it (no I/O facts)."""

    tool: str
    """The tool that publishes it (``write``, ``edit``, ``insert``, ``undo``, …)."""
    session: str
    """The owner's label, unique across processes."""
    source: str | None = None
    """A move's source path (display); None otherwise."""
    undoes: str | None = None
    """For an undo, the id of the entry it reverts."""
    group: str | None = None
    """The change set the change belongs to (SPEC §13); None for a change of its own."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsChangeStart:
    """A change a provider is about to publish, told from inside its critical section."""

    target: FsTarget
    """The file the change publishes (or removes)."""
    verb: Verb
    """The operation, for a refusal's message."""
    before: FsVersion | None
    """The replaced file's version; None when there was none (a create)."""
    pre_image: FsPreImage | None
    """The replaced content, as the backend holds it; None for a create."""
    mode: int | None = None
    """The replaced file's permission bits, when the backend has them."""
    size: int | None = None
    """The replaced content's size in bytes."""
    source: FsTarget | None = None
    """A move's source (the change's `target` is its destination); None otherwise."""
    source_version: FsVersion | None = None
    """The version the moved file had at its source."""
    kind: ChangeKind = ChangeKind.FILE
    """What the change publishes, removes or moves."""
    uid: int | None = None
    """The replaced file's owner, when the backend has one (an undo that recreates the file
    gives it back)."""
    gid: int | None = None
    """The replaced file's group, when the backend has one."""
    codec: str | None = None
    """The codec the file's text is in when it is not UTF-8 (SPEC §12: a rule's, a fallback
    the file proved, a UTF-16 BOM's): the journal keeps it in the entry, so its diffs and
    line counts decode both sides as they were then, whatever the rules say later."""


class FsCapture(ABC):
    """The journal's seam into one mutation; the provider calls it in its critical section.

    `prepare` returns once the pre-image and a pending record are durable (or raises, and
    then the provider publishes nothing); after publication the provider calls `commit`
    (never raising: a pending record the commit could not finish is completed later);
    a failure between the two calls `abandon`, which leaves no entry and no stray.
    """

    @abstractmethod
    def prepare(self, start: FsChangeStart) -> object:
        """Keep the pre-image and a pending record, durably; returns a ticket.

        Raises:
            FsError: `FS_IO_ERROR` naming the journal (a full disk): the change must not
                happen.
        """

    @abstractmethod
    def commit(
        self, ticket: object, after: FsVersion | None, content: bytes | EncodedText | None
    ) -> None:
        """The change is published at `after` (None: the file is gone) with `content`
        (when the provider has it at hand, for the line counts). Never raises."""

    @abstractmethod
    def abandon(self, ticket: object) -> None:
        """The change was not published: forget the pending record and its pre-image."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalEntry:
    """One recorded change (SPEC §9's keys, plus what an undo needs)."""

    id: str
    time: str
    """UTC, RFC 3339."""
    session: str
    tool: str
    path: str
    """The display path of the changed file (a move's destination)."""
    rel: str
    """The same path relative to the store's root (for `diff`)."""
    source: str | None
    """A move's source (the ``from`` key); None otherwise."""
    before: FsVersion | None
    after: FsVersion | None
    added: int | None
    removed: int | None
    undoable: bool
    undoes: str | None
    mode: int | None
    """The replaced file's permission bits (restored by an undo)."""
    size: int | None
    """The pre-image's size in bytes (None: no pre-image)."""
    source_version: FsVersion | None = None
    """A move's file version at its source before the move (what an older change of the
    source left), so undoing a chain that ends in a move finds it again."""
    kind: ChangeKind = ChangeKind.FILE
    """What the change published, removed or moved."""
    digest: str | None = None
    """The sha256 (hex) of the bytes the change published, when the provider had them at
    hand (None: a delete, a move, an older record): what tells a file still as the change
    left it from a same-size rewrite whose mtime was put back (SPEC §9.1)."""
    after_mode: int | None = None
    """The permission bits of the file the change published (None: unknown): a later
    ``chmod`` is a change an undo must not undo past."""
    delta: tuple[int, int, str] | None = None
    """The forward delta ``(head, tail, middle)``: the after-image is the pre-image's first
    `head` bytes, then `middle` (whole lines), then its last `tail` bytes; what `diff`
    shows once the file moved on (None: not text, too large, or not a content change)."""
    group: str | None = None
    """The change set the change belongs to (SPEC §13: `undo GROUP_ID` undoes all of it);
    None for a change of its own."""
    codec: str | None = None
    """The codec of the file's text when it was not UTF-8 (`FsChangeStart.codec`): both
    sides are decoded in it for `diff`, and `delta` is relative to the pre-image's text as
    UTF-8 (None: UTF-8, or a UTF-16 BOM says)."""

    @property
    def directory(self) -> bool:
        """The change made, removed or moved a directory (`ChangeKind.DIRECTORY`)."""
        return self.kind is ChangeKind.DIRECTORY

    @property
    def link(self) -> bool:
        """The change moved a symbolic link itself (`ChangeKind.LINK`)."""
        return self.kind is ChangeKind.LINK

    def to_json(self) -> dict[str, object]:
        """The keys of `log --json` (SPEC §9), and ``group`` for a change of a set."""
        item: dict[str, object] = {
            "id": self.id,
            "time": self.time,
            "session": self.session,
            "tool": self.tool,
            "path": self.path,
            "from": self.source,
            "before": self.before,
            "after": self.after,
            "added": self.added,
            "removed": self.removed,
            "undoable": self.undoable,
            "undoes": self.undoes,
        }
        if self.group is not None:
            item["group"] = self.group
        return item


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalProblem:
    """A damaged record or pre-image (corrupt, truncated, not a regular file, too large, an
    impossible field): reported by `log`, never opened again, followed or applied."""

    name: str
    """The record's name in the store."""
    reason: str
    """Why it is damaged."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalUsage:
    """How much a store holds."""

    location: str
    entries: int
    pre_images: int
    bytes: int


class JournalStore(ABC):
    """Where one served root's journal lives; implemented per backend by the providers.

    The methods are synchronous (the local store runs them in worker threads; a capture's
    calls run inside the provider's critical section).
    """

    location: str
    """Where the store is (a directory, a URL), for messages and `log`."""
    root: str
    """The canonical root whose changes it records."""

    @abstractmethod
    def capture(self, meta: FsChangeMeta) -> FsCapture:
        """The capture of one change described by `meta` (who makes it), handed down to the
        provider with the call: its calls go straight to this store."""

    @abstractmethod
    def entries(self) -> tuple[list[JournalEntry], list[JournalProblem]]:
        """Every entry in id order (oldest first), and the records that could not be read.
        Completes pending records of writers that died (published or not)."""

    @abstractmethod
    def pre_image(self, entry_id: str) -> FsPreImage | None:
        """The handle an undo restores from (None: none kept, or pruned)."""

    @abstractmethod
    def pre_image_bytes(self, entry_id: str, limit: int) -> bytes | None:
        """The kept content, when there is one of at most `limit` bytes (for `diff`)."""

    @abstractmethod
    def usage(self) -> JournalUsage:
        """How much the store holds now."""

    @abstractmethod
    def prune(self, max_bytes: int, max_age_seconds: float, now_ns: int) -> int:
        """Drop pre-images, oldest first, older than `max_age_seconds` or while the store
        (records included) holds more than `max_bytes`; their entries stay, not undoable.
        Returns how many."""

    def bound(self, max_bytes: int, max_age_seconds: float) -> None:  # noqa: B027 - optional
        """Keep the store within these bounds while it records (it prunes as it goes, and
        makes room when its filesystem is full). The default: no bounds kept."""

    def as_published(self, entry: JournalEntry, now: FsVersion) -> bool:
        """Whether the file, found at version `now`, is still exactly what `entry` published
        (content, size, mode and identity), where `now` differs from `entry.after` only by
        what `unchanged` allows. The store compares the content and the mode with what the
        entry recorded (`digest`, `after_mode`); without them it can't tell, and says no.
        The default: equal tokens only."""
        return entry.after == now

    def unchanged(self, recorded: FsVersion, now: FsVersion) -> bool:
        """Whether a file at `now` is still the file a change left at `recorded`, where the
        two tokens differ only by what the journal itself does to a file (the local store's
        hard link of a pre-image, removed again when the change is not published, moves
        the inode's ctime). An undo that relies on it guards on `now` and keeps what it
        replaces, like every undo. The default: equal tokens only."""
        return recorded == now

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the store holds open."""


_EXACT_LINES = 100
"""Middles of at most this many lines on each side are counted as `git diff` would (a
longest common subsequence); longer ones by the lines each side has that the other lacks
(a multiset difference: linear, exact unless lines were reordered)."""

DELTA_LIMIT = 128 * 1024
"""The largest middle a forward delta keeps (bytes); a larger change keeps none. The delta
lives in the entry's record, which must stay small (a store reads records whole, and
refuses one over its bound: 1 MiB, even with every character escaped in JSON)."""


def line_counts(before: bytes | None, after: bytes | None) -> tuple[int | None, int | None]:
    """``(added, removed)`` as `git diff --numstat` counts them; ``(None, None)`` when a side
    is not UTF-8 text (a side with a UTF-16 BOM is counted as its text, SPEC §12). None
    stands for absent (a create or a delete).

    Linear in the size of the change: the shared lines at both ends are trimmed at C speed
    on the bytes, a small middle is matched exactly, a large one counted as multisets (a
    quadratic matcher took seconds on a 19 KiB rewrite of repetitive lines)."""
    before, after = utf16_as_utf8(before), utf16_as_utf8(after)
    if not (_is_text(before) and _is_text(after)):
        return None, None
    old_bytes, new_bytes = before or b"", after or b""
    head, tail = _trim(old_bytes, new_bytes)
    old_middle = _lines(old_bytes[head : len(old_bytes) - tail])
    new_middle = _lines(new_bytes[head : len(new_bytes) - tail])
    if not old_middle or not new_middle:
        return len(new_middle), len(old_middle)
    if len(old_middle) <= _EXACT_LINES and len(new_middle) <= _EXACT_LINES:
        added = removed = 0
        matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
        return added, removed
    # The lines both sides keep, as multisets, counted by C loops only (sets, then the
    # counts of repeated lines through `map`): a Python loop per line costs seconds at 10 MB.
    old_set, new_set = set(old_middle), set(new_middle)
    common = old_set & new_set
    if len(old_set) == len(old_middle) and len(new_set) == len(new_middle):
        kept = len(common)
    else:
        old_count, new_count = Counter(old_middle), Counter(new_middle)
        kept = sum(map(min, map(old_count.__getitem__, common), map(new_count.__getitem__, common)))
    return len(new_middle) - kept, len(old_middle) - kept


def forward_delta(before: bytes | None, after: bytes) -> tuple[int, int, str] | None:
    """What turns `before` (None: absent) into `after`: ``(head, tail, middle)`` as
    `JournalEntry.delta` keeps it; None when a side is not UTF-8 text or the middle is over
    `DELTA_LIMIT`. Linear: one trim at C speed, one decode of the middle."""
    if not (_is_text(before) and _is_text(after)):
        return None
    old_bytes = before or b""
    head, tail = _trim(old_bytes, after)
    middle = after[head : len(after) - tail]
    if len(middle) > DELTA_LIMIT:
        return None
    return head, tail, middle.decode("utf-8")


def apply_delta(before: bytes, delta: tuple[int, int, str]) -> bytes | None:
    """The after-image `delta` makes of `before`; None when it does not fit (a damaged
    record, another pre-image)."""
    head, tail, middle = delta
    if head < 0 or tail < 0 or head + tail > len(before):
        return None
    return before[:head] + middle.encode("utf-8") + before[len(before) - tail :]


def _trim(old_bytes: bytes, new_bytes: bytes) -> tuple[int, int]:
    """The bytes of whole lines both sides share at the start and at the end (C speed, no
    decoding: a one-line edit of a large file decodes one line). A cut right after a
    b"\n" splits the text as `splitlines` would."""
    head = _common_prefix(old_bytes, new_bytes)
    head = old_bytes.rfind(b"\n", 0, head) + 1
    tail = _common_suffix(old_bytes, new_bytes, min(len(old_bytes), len(new_bytes)) - head)
    cut = old_bytes.find(b"\n", len(old_bytes) - tail) + 1 if tail else 0
    tail = len(old_bytes) - cut if cut else 0
    return head, tail


def _lines(data: bytes) -> list[bytes]:
    """The lines of UTF-8 `data` (each with its end), split on the bytes: no decoding."""
    return data.splitlines(keepends=True)


def _is_text(data: bytes | None) -> bool:
    """Absent, or UTF-8 without a NUL byte."""
    if data is None:
        return True
    if b"\0" in data:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share: slices compared by memcmp, doubling while
    they agree, then a binary search in the first slice that differs. Only `b`'s slice is
    copied (`startswith` compares `a` in place): half the copying of two slices."""
    return _shared(lambda lo, hi: a.startswith(b[lo:hi], lo), min(len(a), len(b)))


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit`."""
    return _shared(lambda lo, hi: a.endswith(b[len(b) - hi : len(b) - lo], 0, len(a) - lo), limit)


def _shared(same: Callable[[int, int], bool], limit: int) -> int:
    """The largest n <= `limit` with ``same(0, n)``, given ``same(lo, hi)`` tells whether
    the bytes from lo to hi agree."""
    done, step = 0, 4096
    while done < limit:
        end = min(done + step, limit)
        if not same(done, end):
            break
        done, step = end, step * 2
    else:
        return done
    high = min(done + step, limit)  # the bytes differ somewhere in [done, high)
    while high - done > 1:
        middle = (done + high) // 2
        if same(done, middle):
            done = middle
        else:
            high = middle
    return done
