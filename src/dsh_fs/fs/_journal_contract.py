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
import hashlib
import operator
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Literal

from ._encoded import Buffer, EncodedText
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
    "text_change",
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
    hunks: tuple[int, ...] | None = None
    """For a revert by hunk, the numbers of the hunks of `undoes` it reverted (the others
    stay in force: a later undo of that change takes back only those)."""
    hunk_count: int | None = None
    """For a revert by hunk, how many hunks the change it reverts has."""
    approved_by: str | None = None
    """Who approved the change before it landed (SPEC §11.2: ``callback``, ``elicitation``,
    ``review``, or the approver's own name); None when no approval was asked."""
    approval_note: str | None = None
    """The note the approver gave with the approval; None without one."""


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
    content: bytes | EncodedText | None = None
    """The replaced content, when the provider holds it in memory already (an edit read
    it): the store counts lines from it rather than reading the pre-image back. None: the
    store reads what it kept."""
    codec: str | None = None
    """The codec the file's text is in when it is not UTF-8 (SPEC §12: a rule's, a fallback
    the file proved, a UTF-16 BOM's): the journal keeps it in the entry, so its diffs and
    line counts decode both sides as they were then, whatever the rules say later."""
    after: bytes | EncodedText | None = None
    """The content the change is about to publish, when the provider holds it and has not
    hashed it: the store may hash it and count its lines while the content is written and
    made durable (off the call's path), rather than after the publication. `commit` gets
    the same content. None: the store does it at `commit`."""


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
        self,
        ticket: object,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None = None,
    ) -> None:
        """The change is published at `after` (None: the file is gone) with `content`
        (when the provider has it at hand, for the line counts), whose sha256 is `digest`
        when the provider computed it already (the store then does not hash it again).
        Never raises."""

    @abstractmethod
    def abandon(self, ticket: object) -> None:
        """The change was not published: forget the pending record and its pre-image."""

    def approved(self, by: str, note: str | None) -> FsCapture:
        """This capture, its entry recording that `by` approved the change (with `note`;
        SPEC §11.2). The approval is known only after the capture was made (the person is
        asked between the call's start and the publication). Default: `self` (a capture that
        keeps no author)."""
        del by, note
        return self


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
    hand and `delta` does not already tell them (None: a delete, a move, an older record,
    or a UTF-8 change whose delta is kept: `published_digest` makes it from the pre-image):
    what tells a file still as the change left it from a same-size rewrite whose mtime was
    put back (SPEC §9.1)."""
    after_mode: int | None = None
    """The permission bits of the file the change published (None: unknown): a later
    ``chmod`` is a change an undo must not undo past."""
    after_generation: int | None = None
    """The generation of the directory a change made (None: unknown, or no directory): tells
    that directory from one made at the same path later on the inode number it freed."""
    before_generation: int | None = None
    """The generation of the directory a change removed (None: unknown, or no directory)."""
    delta: tuple[int, int, str] | None = None
    """The forward delta ``(head, tail, middle)``: the after-image is the pre-image's first
    `head` bytes, then `middle` (whole lines), then its last `tail` bytes; what `diff`
    shows once the file moved on (None: not text, too large, or not a content change)."""
    group: str | None = None
    """The change set the change belongs to (SPEC §13: `undo GROUP_ID` undoes all of it);
    None for a change of its own."""
    hunks: tuple[int, ...] | None = None
    """For a revert by hunk (tool ``undo-hunks``): the numbers of the hunks of the change
    it names (`undoes`) that it reverted; None otherwise."""
    hunk_count: int | None = None
    """For a revert by hunk: how many hunks the change it names has (that change is undone
    once the reverts in force took back every one of them)."""
    approved_by: str | None = None
    """Who approved the change before it landed (SPEC §11.2); None: no approval asked."""
    approval_note: str | None = None
    """The approver's note; None without one."""
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

    def published_digest(self, pre_image: bytes | None) -> str | None:
        """The sha256 (hex) of the bytes the change published: `digest`, else the forward
        delta applied to `pre_image` (the change's kept pre-image; unused for a create)
        and hashed; None when neither tells (no delta, a text in another codec, no
        pre-image). A journaled change hashes nothing where its delta already says what it
        published (a sha256 was a third of a journaled 1 MB call's CPU); only an undo whose
        guard must compare content pays for it, once."""
        if self.digest is not None:
            return self.digest
        if self.delta is None or self.codec is not None or self.after is None:
            return None
        base = b"" if self.before is None else pre_image
        # A pre-image with a UTF-16 BOM: the delta is relative to its text as UTF-8, not to
        # its bytes (the store records the digest of such a change, so this is an older
        # record's: not provable).
        if base is None or utf16_as_utf8(base) is not base:
            return None
        made = apply_delta(base, self.delta)
        return None if made is None else hashlib.sha256(made).hexdigest()

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
        if self.approved_by is not None:
            item["approved_by"] = self.approved_by
            item["approval_note"] = self.approval_note
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

    def same_directory(self, entry: JournalEntry, now: FsVersion) -> bool:
        """Whether the directory `entry` made (a mkdir), found at version `now`, is still as
        the change left it: that directory (its identity), with the mode it was made with,
        and empty, whatever was made in it and removed again since (its timestamps moved).
        Its undo may then remove it (the removal still refuses one not empty). The default:
        equal tokens only."""
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

    Linear in the size of the change, and no Python loop per line: the shared lines at both
    ends are trimmed at C speed on the bytes, a small middle is matched exactly, a large one
    counted as multisets (a quadratic matcher took seconds on a 19 KiB rewrite of repetitive
    lines) after the lines still in place are paired off by one C comparison per line; a
    middle over `_CHUNK` bytes a side is split and paired a chunk at a time
    (`_kept_by_chunks`)."""
    before, after = utf16_as_utf8(before), utf16_as_utf8(after)
    old_bytes, new_bytes = before or b"", after or b""
    head, tail = _trim(old_bytes, new_bytes)
    if not _both_text(before, after, head, tail):
        return None, None
    return _counted(old_bytes, new_bytes, head, tail)


def text_change(
    before: bytes | None, after: bytes | EncodedText, *, before_utf8: bool = False
) -> tuple[int | None, int | None, tuple[int, int, str] | None]:
    """``(added, removed, delta)``: what `line_counts` and `forward_delta` say of the change
    from `before` (None: absent) to `after` (sides as `transcoded_utf8` gives them), with
    one trim and one text check of each side rather than two of each (they were two thirds
    of what a journaled 1 MB edit's record cost). `before_utf8`: `before` is known to be
    valid UTF-8 (the bytes of an `EncodedText` a provider read and checked), so only a NUL
    byte can make it not text (`after` is checked: its middle alone, for a small change).
    An `after` in pieces (an edit's: views of the replaced bytes around the new
    string) is compared piece by piece, never joined when the change is small."""
    old_bytes = before or b""
    if isinstance(after, EncodedText):
        head, tail = _trim_parts(old_bytes, after.parts, after.size)
        size = after.size
        if (size - head - tail) * 2 < size and size - head - tail <= _CHUNK:
            middle = _joined(after.parts, head, size - tail)
            if not (_is_text(before, before_utf8) and _is_text(middle)):
                return None, None, None
            delta = (head, tail, middle.decode("utf-8")) if len(middle) <= DELTA_LIMIT else None
            old_lines = _middle_lines(old_bytes, head, tail)
            return (*_counted_lines(old_lines, _lines(middle)), delta)
        after = after.to_bytes()  # most of it changed: as one piece
    head, tail = _trim(old_bytes, after)
    if not _both_text(before, after, head, tail, before_utf8):
        return None, None, None
    delta = None
    if len(after) - tail - head <= DELTA_LIMIT:
        delta = (head, tail, after[head : len(after) - tail].decode("utf-8"))
    return (*_counted(old_bytes, after, head, tail), delta)


def _counted(old_bytes: bytes, new_bytes: bytes, head: int, tail: int) -> tuple[int, int]:
    """`line_counts` of two texts that share their first `head` and last `tail` bytes (as
    `_trim` found them)."""
    if min(len(old_bytes), len(new_bytes)) - head - tail > _CHUNK:
        old_count, new_count, kept = _kept_by_chunks(old_bytes, new_bytes, head, tail)
        if old_count > _EXACT_LINES or new_count > _EXACT_LINES:
            return new_count - kept, old_count - kept
    return _counted_lines(
        _middle_lines(old_bytes, head, tail), _middle_lines(new_bytes, head, tail)
    )


def _counted_lines(old_lines: list[bytes], new_lines: list[bytes]) -> tuple[int, int]:
    """``(added, removed)`` between the lines of two middles: matched exactly when both are
    small, else counted as multisets (`_kept`)."""
    if not old_lines or not new_lines:
        return len(new_lines), len(old_lines)
    if len(old_lines) <= _EXACT_LINES and len(new_lines) <= _EXACT_LINES:
        added = removed = 0
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
        return added, removed
    kept = _kept(old_lines, new_lines)
    return len(new_lines) - kept, len(old_lines) - kept


def _trim_parts(old_bytes: bytes, parts: Sequence[Buffer], size: int) -> tuple[int, int]:
    """`_trim` of `old_bytes` and the `size` bytes `parts` make together, without joining
    them: each piece is compared in place (an edit's pieces around its new string are views
    of the replaced bytes, so its trim is one compare of each end)."""
    shared = 0
    for part in parts:
        view = memoryview(part)
        if old_bytes.startswith(view, shared):
            shared += len(view)
            continue
        shared += _prefix_at(old_bytes, shared, view)
        break
    head = old_bytes.rfind(b"\n", 0, shared) + 1
    limit = min(len(old_bytes), size) - head
    shared = 0
    for part in reversed(parts):
        if shared >= limit:
            break
        view = memoryview(part)
        take = min(len(view), limit - shared)
        piece, end = view[len(view) - take :], len(old_bytes) - shared
        if old_bytes.endswith(piece, 0, end):
            shared += take
            continue
        shared += _suffix_at(old_bytes, end, piece)
        break
    cut = old_bytes.find(b"\n", len(old_bytes) - shared) + 1 if shared else 0
    return head, len(old_bytes) - cut if cut else 0


def _prefix_at(data: bytes, at: int, view: memoryview) -> int:
    """How many leading bytes of `view` the bytes of `data` from `at` share."""
    return _shared(
        lambda lo, hi: data.startswith(view[lo:hi], at + lo), min(len(view), len(data) - at)
    )


def _suffix_at(data: bytes, end: int, view: memoryview) -> int:
    """How many trailing bytes of `view` (no longer than `data[:end]`) the bytes of `data`
    before `end` share."""
    size = len(view)
    return _shared(lambda lo, hi: data.endswith(view[size - hi : size - lo], 0, end - lo), size)


def _joined(parts: Sequence[Buffer], start: int, stop: int) -> bytes:
    """The bytes from `start` to `stop` of what `parts` make together."""
    out = []
    at = 0
    for part in parts:
        size = len(memoryview(part))
        if at + size > start and at < stop:
            out.append(memoryview(part)[max(start - at, 0) : stop - at])
        at += size
    return b"".join(out)


def _kept(old_lines: list[bytes], new_lines: list[bytes]) -> int:
    """How many lines both sides keep, counted as multisets (the sum over each distinct line
    of the fewer of its two counts), by C loops only: a Python loop per line costs seconds
    at 10 MB, and building two sets of every line costs more than the rest together.

    The lines still at the same place on both sides are paired off first (a rewrite in
    place keeps most lines where they were): taking one copy of a line off both multisets
    lowers their common count by exactly one, so the count stays the multisets' own; only
    the lines that differ in place are put in sets."""
    old_left: list[bytes] = []
    new_left: list[bytes] = []
    compared, equal = _pair_off(old_lines, new_lines, old_left, new_left)
    old_left += old_lines[compared:]
    new_left += new_lines[compared:]
    return equal + _common(old_left, new_left)


def _pair_off(
    old_lines: list[bytes], new_lines: list[bytes], old_left: list[bytes], new_left: list[bytes]
) -> tuple[int, int]:
    """Compares the lines at the same place on both sides (as far as the shorter side
    goes) and adds those that differ to `old_left` / `new_left`: how many places were
    compared, and how many of them held equal lines."""
    # `operator.ne` rather than `bytes.__ne__`: a third of the time (no slot wrapper).
    differ = list(map(operator.ne, old_lines, new_lines))  # stops at the shorter side
    old_left += compress(old_lines, differ)
    new_left += compress(new_lines, differ)
    return len(differ), differ.count(False)


def _common(old_left: list[bytes], new_left: list[bytes]) -> int:
    """How many lines `old_left` and `new_left` share, as multisets."""
    if not old_left or not new_left:
        return 0
    old_set = set(old_left)
    if len(old_set) == len(old_left):
        # Each line once on the old side: a common line is kept once, however often the
        # new side repeats it (no set of the new side needed).
        return len(old_set.intersection(new_left))
    new_set = set(new_left)
    common = old_set & new_set
    old_count, new_count = Counter(old_left), Counter(new_left)
    return sum(map(min, map(old_count.__getitem__, common), map(new_count.__getitem__, common)))


_CHUNK = 128 * 1024
"""The bytes of each side `_kept_by_chunks` splits into lines at a time."""


def _kept_by_chunks(old: bytes, new: bytes, head: int, tail: int) -> tuple[int, int, int]:
    """``(old lines, new lines, lines kept)`` of the middles of `old` and `new` (between
    their shared first `head` and last `tail` bytes, both cut right after a b"\n"), counted
    as `_kept` counts them, split a chunk at a time: only the lines that differ in place
    outlive their chunk.

    Splitting a 10 MB side whole made 240,000 line objects at once, and most of their cost
    was the fresh memory's page faults (the allocator hands emptied arenas back to the
    system, so every count faulted its memory in again); a chunk's lines reuse the memory
    the previous chunk's freed. Each round pairs off the lines at the head of both sides'
    buffers, so both stay at the same line number; the side that split more lines keeps
    the rest for the next round, and a side reads its next chunk only when its buffer is
    empty (a side of many short lines never piles up more than a chunk)."""
    old_stop, new_stop = len(old) - tail, len(new) - tail
    old_at = new_at = head
    old_buffer: list[bytes] = []
    new_buffer: list[bytes] = []
    old_left: list[bytes] = []
    new_left: list[bytes] = []
    old_count = new_count = equal = 0
    while True:
        if not old_buffer and old_at < old_stop:
            old_at, old_buffer = _chunk_lines(old, old_at, old_stop)
            old_count += len(old_buffer)
        if not new_buffer and new_at < new_stop:
            new_at, new_buffer = _chunk_lines(new, new_at, new_stop)
            new_count += len(new_buffer)
        if not old_buffer or not new_buffer:
            break  # a side is done: the other's lines are all unpaired
        compared, same = _pair_off(old_buffer, new_buffer, old_left, new_left)
        equal += same
        del old_buffer[:compared], new_buffer[:compared]
    while old_at < old_stop:
        old_at, lines = _chunk_lines(old, old_at, old_stop)
        old_buffer += lines
        old_count += len(lines)
    while new_at < new_stop:
        new_at, lines = _chunk_lines(new, new_at, new_stop)
        new_buffer += lines
        new_count += len(lines)
    old_left += old_buffer
    new_left += new_buffer
    return old_count, new_count, equal + _common(old_left, new_left)


def _chunk_lines(data: bytes, start: int, stop: int) -> tuple[int, list[bytes]]:
    """The lines of `data` from `start` (right after a b"\n") in about `_CHUNK` bytes,
    cut right after a b"\n" (or at `stop`), as `_lines` splits them, and where they end."""
    end = stop
    if start + _CHUNK < stop:
        # rfind and find give -1 when there is none: 0 after the + 1, so the next is tried.
        end = (
            data.rfind(b"\n", start, start + _CHUNK) + 1
            or data.find(b"\n", start + _CHUNK, stop) + 1
            or stop
        )
    return end, _lines(data[start:end])


def forward_delta(before: bytes | None, after: bytes) -> tuple[int, int, str] | None:
    """What turns `before` (None: absent) into `after`: ``(head, tail, middle)`` as
    `JournalEntry.delta` keeps it; None when a side is not UTF-8 text or the middle is over
    `DELTA_LIMIT`. Linear: one trim at C speed, one decode of the middle (a middle over the
    limit is never copied)."""
    old_bytes = before or b""
    head, tail = _trim(old_bytes, after)
    if len(after) - tail - head > DELTA_LIMIT:
        return None
    if not _both_text(before, after, head, tail):
        return None
    return head, tail, after[head : len(after) - tail].decode("utf-8")


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


def _both_text(
    before: bytes | None,
    after: bytes | None,
    head: int,
    tail: int,
    before_utf8: bool = False,
) -> bool:
    """Whether both sides are text (`_is_text`), given they share their first `head` and
    last `tail` bytes, cut right after a b"\n" (never inside a character): `before` is
    checked whole and of `after` only what lies between (a one-line change of a large file
    checks its bytes once, not twice). A `before` known to be valid UTF-8 (`before_utf8`)
    is checked for a NUL byte only."""
    if not _is_text(before, before_utf8):
        return False
    if after is None or len(after) - head - tail > len(after) // 2:
        return _is_text(after)  # most of it: checked whole rather than copied out first
    return _is_text(after[head : len(after) - tail])


def _middle_lines(data: bytes, head: int, tail: int) -> list[bytes]:
    """The lines of `data` between its first `head` and last `tail` bytes (both cut right
    after a b"\n"), as `_lines` splits them. A middle that is most of the file is not
    copied out first (copying 10 MB costs as much as comparing its lines): the whole is
    split, and the lines of the shared ends dropped from the list."""
    size = len(data) - head - tail
    if size * 2 < len(data):
        return _lines(data[head : len(data) - tail])
    lines = _lines(data)
    tail_lines = data.count(b"\n", len(data) - tail) if tail else 0
    if tail and not data.endswith(b"\n"):
        tail_lines += 1  # the last line, without its b"\n", is one of the tail's
    del lines[len(lines) - tail_lines :]
    del lines[: data.count(b"\n", 0, head)]
    return lines


def _lines(data: bytes) -> list[bytes]:
    """The lines of UTF-8 `data`, split on b"\n" as git splits them (a lone b"\r" ends no
    line), without their ends: no decoding. A last line without b"\n" carries a NUL (never
    in text), so it differs from the same line with one, as git counts them."""
    lines = data.split(b"\n")
    last = lines.pop()
    if last:
        lines.append(last + b"\0")
    return lines


def _is_text(data: bytes | None, utf8: bool = False) -> bool:
    """Absent, or UTF-8 without a NUL byte (`utf8`: `data` is known to be valid UTF-8)."""
    if data is None:
        return True
    if b"\0" in data:
        return False
    if utf8 or data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share: slices compared by memcmp, doubling while
    they agree, then a binary search in the first slice that differs. Nothing is copied:
    `startswith` compares `a` in place with a view of `b` (a copied slice of `b` cost four
    times the compare, and its large allocations slowed the threads beside it)."""
    view = memoryview(b)
    return _shared(lambda lo, hi: a.startswith(view[lo:hi], lo), min(len(a), len(b)))


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit` (`b` seen through a view,
    as in `_common_prefix`)."""
    view, size = memoryview(b), len(b)
    return _shared(lambda lo, hi: a.endswith(view[size - hi : size - lo], 0, len(a) - lo), limit)


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
