"""Stat-based versions for the local provider, backed by content where stat can't tell.

A version is the stat tuple (device, inode, size, mtime ns, ctime ns). Two gaps remain, and
content the provider already holds closes both:

- *Racy versions.* On a filesystem with coarse timestamps (FAT's 2 s, many network
  filesystems, older kernels) an in-place rewrite of the same size within one timestamp tick
  keeps the tuple. A version observed less than `racy_window_ns` after the file's last
  change is "racy": the provider remembers a digest of the content it served or wrote at
  that version, and a guarded mutation that finds the same tuple compares content too.
- *Metadata-only changes.* `touch`, or a rewrite with identical bytes, changes the tuple but
  not the content. When the provider remembers the content seen at the expected version
  and the current content has the same digest, the file is still "at" that version.

Digests are remembered for content the provider read whole (up to `DIGEST_LIMIT` bytes, or
any size when racy) and for everything it publishes; the memory is a bounded LRU.
`RecentlyPublished` keeps the last content published per target whole while it is small, so
the next mutation of that target can prove it unchanged with a byte compare. The digest of
content it keeps is computed only when a check first needs it (`VersionBook.remember` with a
function): the agent loop's next check is that byte compare, and a publication then costs no
hashing at all (issue 44).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dsh_fs.fs import EncodedText, FsVersion

__all__ = [
    "DIGEST_LIMIT",
    "RACY_WINDOW_NS",
    "RECENT_BUDGET",
    "ContentDigest",
    "Published",
    "RecentlyPublished",
    "VersionBook",
    "digest",
    "digest_parts",
    "equal_in_place",
    "same_inode",
]

DIGEST_LIMIT = 4 * 1024 * 1024
"""Non-racy content is fingerprinted on read only up to this size (hashing bigger files on
every read costs more than it saves); larger files fall back to the stat tuple alone, so a
`touch` makes them stale."""

RACY_WINDOW_NS = 3_000_000_000
"""A version observed within 3 s of the file's last change may hide a same-tick rewrite
(FAT has 2 s timestamps; network filesystems often 1 s)."""

RECENT_BUDGET = 32 * 1024 * 1024
"""Bytes (encoded content plus its `str`) `RecentlyPublished` keeps at most."""

_MAX_ENTRIES = 4096


def digest(data: bytes | bytearray | memoryview) -> bytes:
    """The content fingerprint (sha256: collision-resistant, hardware-accelerated)."""
    return hashlib.sha256(data).digest()


def digest_parts(parts: Iterable[bytes | bytearray | memoryview]) -> bytes:
    """`digest` of the concatenation of `parts`, without concatenating them."""
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    return hasher.digest()


@dataclass(frozen=True, slots=True)
class ContentDigest:
    """What the provider knows of the content at one version."""

    digest: bytes
    """sha256 of the bytes."""
    size: int
    """Their length."""
    racy: bool
    """Whether the tuple alone may miss a same-tick rewrite of this version."""


@dataclass(frozen=True, slots=True)
class _Deferred:
    """A digest not computed yet: the content is kept by `RecentlyPublished` (see
    `VersionBook.release`)."""

    compute: Callable[[], bytes]
    """Computes it."""
    size: int
    """The content's length."""
    racy: bool
    """As `ContentDigest.racy`."""


class VersionBook:
    """Mints versions from stat results and remembers content digests per version.

    Args:
        timestamp_granularity_ns: Resolution of the filesystem's timestamps. Versions
            truncate mtime and ctime to it; use it for a filesystem that reports finer
            timestamps than it keeps (and in tests, to fake a coarse one).
        clock: The wall clock in nanoseconds since the epoch (what racy is measured by).
    """

    def __init__(
        self, timestamp_granularity_ns: int = 1, clock: Callable[[], int] = time.time_ns
    ) -> None:
        if timestamp_granularity_ns < 1:
            raise ValueError("timestamp_granularity_ns must be at least 1")
        self._clock = clock
        self._tick = timestamp_granularity_ns
        self._racy_window = max(RACY_WINDOW_NS, 2 * timestamp_granularity_ns)
        self.exact = timestamp_granularity_ns == 1
        """Whether versions keep every nanosecond of the timestamps (a stamped publication
        proves itself by its version only then, `_publish.Staged.stamp`)."""
        self._seen: OrderedDict[FsVersion, ContentDigest | _Deferred] = OrderedDict()
        self._lock = threading.Lock()  # mutations run in worker threads

    def version(self, info: os.stat_result) -> FsVersion:
        """The version token of a stat result."""
        tick = self._tick
        mtime, ctime = info.st_mtime_ns // tick * tick, info.st_ctime_ns // tick * tick
        return FsVersion(f"{info.st_dev:x}:{info.st_ino:x}:{info.st_size:x}:{mtime:x}:{ctime:x}")

    def same_entry(self, info: os.stat_result, version: FsVersion) -> bool:
        """Whether `info` is the inode `version` was taken of, whatever changed in it since:
        a directory's or a link's identity."""
        return same_inode(self.version(info), version)

    def is_racy(self, info: os.stat_result) -> bool:
        """Whether a version observed now could hide a later rewrite in the same tick."""
        changed = max(info.st_mtime_ns, info.st_ctime_ns)
        return self._clock() - changed < self._racy_window

    def wants_digest(self, info: os.stat_result) -> bool:
        """Whether a whole read of this file should fingerprint what it reads."""
        return info.st_size <= DIGEST_LIMIT or self.is_racy(info)

    def settled(self, version: FsVersion) -> bool:
        """Whether the digest remembered for `version` is final: computed, and taken when the
        version was no longer racy, so no rewrite can have kept the version since (one would
        change the timestamps by more than a tick). Then a later read of that version need
        not hash its content again; the entry is refreshed as the most recently used. A racy
        entry is not final: a read now may see content a same-tick rewrite left."""
        with self._lock:
            entry = self._seen.get(version)
            if not isinstance(entry, ContentDigest) or entry.racy:
                return False
            self._seen.move_to_end(version)
        return True

    def remember(
        self, info: os.stat_result, content_digest: bytes | Callable[[], bytes]
    ) -> FsVersion:
        """Record that the content at `info`'s version has `content_digest`; returns it.

        `content_digest` may be a function that computes it from content the caller keeps
        (`RecentlyPublished`): it is called when a check first needs the digest, and the
        keeper calls `release` when it lets the content go."""
        version = self.version(info)
        racy = self.is_racy(info)
        entry = (
            ContentDigest(content_digest, info.st_size, racy)
            if isinstance(content_digest, bytes)
            else _Deferred(content_digest, info.st_size, racy)
        )
        with self._lock:
            self._seen[version] = entry
            self._seen.move_to_end(version)
            while len(self._seen) > _MAX_ENTRIES:
                self._seen.popitem(last=False)
        return version

    def lookup(self, version: FsVersion) -> ContentDigest | None:
        """The digest remembered for `version`, if any (computed now if it was deferred)."""
        with self._lock:
            entry = self._seen.get(version)
        if not isinstance(entry, _Deferred):
            return entry
        settled = ContentDigest(entry.compute(), entry.size, entry.racy)
        with self._lock:
            if self._seen.get(version) is entry:
                self._seen[version] = settled
        return settled

    def release(self, version: FsVersion, superseded: bool) -> None:
        """The keeper of `version`'s content lets it go: a deferred digest is computed now,
        unless the version is `superseded` (the keeper's own later publication replaced that
        file: no file can be at it again, so its digest would only ever tell that another
        file has the same bytes, and is dropped). A digest a read or a check settled stays."""
        with self._lock:
            entry = self._seen.get(version)
            if not isinstance(entry, _Deferred):
                return
            if superseded:
                del self._seen[version]
                return
        self.lookup(version)

    def is_current(
        self,
        expected: FsVersion,
        info: os.stat_result,
        content: Callable[[], bytes | bytearray],
    ) -> bool:
        """Whether the file (stat `info`, bytes from `content()`) is still at `expected`.

        The compare of every compare-and-swap. `content` is called only when the tuple
        can't decide: a racy match, or a mismatch where the expected content is known.
        """
        seen = self.lookup(expected)
        if self.version(info) == expected:
            return seen is None or not seen.racy or digest(content()) == seen.digest
        if seen is None or seen.size != info.st_size:
            return False
        return digest(content()) == seen.digest

    def could_hold(self, expected: FsVersion, info: os.stat_result) -> bool:
        """Whether `is_current` could find the file (stat `info`) at `expected`, judged as
        it judges without the content: the same version, or one of the size of the content
        remembered at `expected`. False: not current, whatever the file holds."""
        if self.version(info) == expected:
            return True
        with self._lock:
            seen = self._seen.get(expected)
        return seen is not None and seen.size == info.st_size

    def holds(
        self,
        expected: FsVersion,
        info: os.stat_result,
        content: Callable[[], bytes | bytearray],
        known: bytes,
    ) -> bool:
        """`is_current` for a caller that read `known`, the bytes at `expected`: compared
        with the file's where `is_current` compares digests (a same-tick rewrite, a touch),
        so nothing is hashed; the tuple still decides where it can (a version known not
        racy). A file that does not hold `known` is never current."""
        if self.version(info) == expected:
            with self._lock:
                seen = self._seen.get(expected)
            # A deferred entry's `racy` is known without computing its digest.
            if seen is not None and not seen.racy:
                return True
        elif info.st_size != len(known):
            return False
        return content() == known


def same_inode(one: str, other: str) -> bool:
    """Whether two version tokens name the same inode (their device and inode fields)."""
    return one.split(":")[:2] == other.split(":")[:2]


@dataclass(frozen=True, slots=True)
class Published:
    """Content the provider published, kept whole: text as a read takes it (UTF-8, no
    NUL)."""

    version: FsVersion
    """The version the publication returned."""
    parts: tuple[bytes, ...]
    """The bytes written, in the pieces they were written in: a large text is encoded and
    written piece by piece (`encode_text_parts`), and kept so, never joined into a copy."""
    known_text: str | None
    """The same content as text, when the publisher had it (a write; an edit has bytes)."""
    generation: int | None = None
    """The published inode's generation when its publication was stamped
    (`_publish.Publication.generation`): then no change of the file keeps `version`, and a
    file at it with this generation holds these bytes, uncompared. None: not stamped."""

    @property
    def stamped(self) -> bool:
        """Whether its publication was stamped (`generation`)."""
        return self.generation is not None

    @property
    def content(self) -> EncodedText:
        """The bytes written, with their text when known."""
        return EncodedText(self.parts, text=self.known_text)

    @property
    def text(self) -> str:
        """The content as text (decoded now unless known: the bytes are valid UTF-8)."""
        return self.known_text if self.known_text is not None else self.content.text


class RecentlyPublished:
    """The last content published per target, while it is small: a bounded LRU.

    Why: a mutation must check the prior content of a racy version (a hash) and return or
    edit its text (a strict decode), over half of a write's cost. When the prior content is
    what this provider published last (an edit after an edit, a write after a write: the
    agent loop), a byte compare proves it unchanged, far cheaper, and the text is at hand.

    Args:
        budget: Most bytes kept, counting the encoded content and its `str` when known.
        release: Told `(version, superseded)` when an entry is let go: replaced by the same
            target's next publication (superseded), or pushed out by the budget.
    """

    def __init__(
        self,
        budget: int = RECENT_BUDGET,
        release: Callable[[FsVersion, bool], None] | None = None,
    ) -> None:
        self._budget = budget
        self._release = release
        self._entries: OrderedDict[str, tuple[Published, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()  # mutations run in worker threads

    def fits(self, content: EncodedText) -> bool:
        """Whether `keep` would keep `content` by its size (a NUL in it is found only by
        `keep`, on the bytes it joins)."""
        return self._cost(content) <= self._budget // 4 and content.size <= DIGEST_LIMIT

    @staticmethod
    def _cost(content: EncodedText) -> int:
        text = content.decoded
        return content.size + (sys.getsizeof(text) if text is not None else 0)

    def keep(
        self,
        key: str,
        version: FsVersion,
        content: EncodedText,
        *,
        generation: int | None = None,
        nul_free: bool = False,
    ) -> Published | None:
        """Remember that `key` now holds `content` at `version` (`generation`: see
        `Published.generation`) and return what is kept; too big, or holding a NUL (a binary
        file, SPEC §3), is forgotten (None). `nul_free`: the caller looked for a NUL
        already and found none."""
        cost = self._cost(content)
        published = None
        if self.fits(content):
            parts = _owned(content)
            # An edit takes what is kept as its prior text unchecked: a file this provider
            # published with a NUL must be read and refused as binary, as one another
            # program wrote is, so read, edit and edit_files agree about it (a memchr on
            # the bytes: ~12 µs a MiB).
            if nul_free or not any(b"\0" in part for part in parts):
                published = Published(version, parts, content.decoded, generation)
        released: list[tuple[FsVersion, bool]] = []
        with self._lock:
            released += self._drop(key, superseded=True)
            if published is not None:
                self._entries[key] = (published, cost)
                self._used += cost
                while self._used > self._budget:
                    released += self._drop(next(iter(self._entries)), superseded=False)
        self._released(released)
        return published

    def match(
        self, key: str, version: FsVersion, content: Callable[[], bytes | bytearray]
    ) -> Published | None:
        """What was published at `key`, if the file is at that `version` with those bytes.

        `content` is called only when a publication at `version` is remembered.
        """
        published = self.at(key, version)
        if published is None:
            return None
        return published if equal_in_place(published.parts, (content(),)) else None

    def at(self, key: str, version: FsVersion) -> Published | None:
        """What was published at `key` if that publication made `version`, unproven: the
        caller compares the file's bytes with it (`LazyContent.holds`)."""
        with self._lock:
            entry = self._entries.get(key)
        return entry[0] if entry is not None and entry[0].version == version else None

    def moved(self, source: str, destination: str, version: FsVersion) -> None:
        """The file at `source` was renamed to `destination` (the same inode), where it is
        now at `version`. What was kept for `source` is kept for `destination` when the
        file is still at the version kept (a filesystem whose timestamps don't show the
        rename): the moved file is that publication, and its deferred digest must outlive
        the next publication at `source`, which would otherwise drop it as superseded
        while a file is still at its version. Otherwise it is let go (no file can be at the
        kept version now). What was kept for `destination` is superseded: the rename
        replaced that file."""
        with self._lock:
            released = self._drop(destination, superseded=True)
            entry = self._entries.pop(source, None)
            if entry is not None:
                if entry[0].version == version:
                    self._entries[destination] = entry
                else:
                    self._used -= entry[1]
                    released.append((entry[0].version, True))
        self._released(released)

    def forget(self, key: str) -> None:
        """Forget what was published at `key`, which a publication of content whose text is
        not its UTF-8 just replaced."""
        with self._lock:
            released = self._drop(key, superseded=True)
        self._released(released)

    def _drop(self, key: str, *, superseded: bool) -> list[tuple[FsVersion, bool]]:
        entry = self._entries.pop(key, None)
        if entry is None:
            return []
        self._used -= entry[1]
        return [(entry[0].version, superseded)]

    def _released(self, released: list[tuple[FsVersion, bool]]) -> None:
        """Tell `release` (outside the lock: settling a digest hashes)."""
        if self._release is not None:
            for version, superseded in released:
                self._release(version, superseded)


def equal_in_place(
    parts: Sequence[bytes], chunks: Iterable[bytes | bytearray | memoryview]
) -> bool:
    """Whether `chunks`, in order, are the bytes of `parts`: each stretch compared where it
    lies (`bytes.startswith` at an offset, a `memcmp`: no joined copy of either side; a
    `memoryview` comparison goes element by element, ~85 times slower)."""
    index, offset = 0, 0  # the part, and the offset in it, the next byte is compared with
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            if index == len(parts):
                return False  # more bytes than were written
            part = parts[index]
            size = min(len(view), len(part) - offset)
            if not part.startswith(view[:size], offset):
                return False
            view = view[size:]
            offset += size
            if offset == len(part):
                index, offset = index + 1, 0
    return all(not part for part in parts[index:])


def _owned(content: EncodedText) -> tuple[bytes, ...]:
    """`content`'s pieces as `bytes` objects of their own, kept as they are; pieces that
    are views (an edit's, into the bytes it replaced) are joined into one copy, which does
    not hold the replaced content alive."""
    parts = content.parts
    owned = tuple(part for part in parts if isinstance(part, bytes))
    return owned if len(owned) == len(parts) else (content.to_bytes(),)
