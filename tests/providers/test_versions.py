"""Versions backed by content: racy same-tick rewrites are stale, metadata-only changes are not.

Coarse timestamps are faked with `timestamp_granularity_ns` (the stat tuple is what the
filesystem would report), since this disk keeps nanoseconds.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import EncodedText, FsEditRequest, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._versions import (
    DIGEST_LIMIT,
    RecentlyPublished,
    VersionBook,
    digest,
)

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick (a 1000 s one
# was crossed once in a while between two steps of a test)


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Another program rewriting the file without dsh-fs: same inode, same size."""
    with path.open("r+b") as f:
        f.write(data)


async def test_same_size_rewrite_in_one_coarse_tick_keeps_the_tuple_but_edit_is_stale(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"alpha\n")
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    assert seen is not None
    assert await fs.read_text(target) == "alpha\n"

    rewrite_in_place(path, b"omega\n")
    after = await fs.stat(target)
    assert after is not None
    assert after.version == seen.version

    with pytest.raises(FsError) as stale:
        await fs.edit_text(target, FsEditRequest(old_string="a", new_string="b"), seen.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION
    with pytest.raises(FsError) as stale_write:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version))
    assert stale_write.value.code is FsErrorCode.STALE_VERSION
    assert path.read_bytes() == b"omega\n"


async def test_same_size_rewrite_after_our_own_write_is_stale_too(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, "alpha\n")
    rewrite_in_place(tmp_path / "a.txt", b"omega\n")
    with pytest.raises(FsError) as stale:
        await fs.edit_text(target, FsEditRequest(old_string="a", new_string="b"), written.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION


async def test_unchanged_racy_file_is_still_current(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, "alpha\n")
    edited = await fs.edit_text(
        target, FsEditRequest(old_string="alpha", new_string="beta"), written.version
    )
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "beta\n"
    assert edited.replacements == 1


async def test_touch_after_a_read_is_not_stale(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    assert seen is not None
    await fs.read_text(target)
    os.utime(path, ns=(10**18, 10**18))
    touched = await fs.stat(target)
    assert touched is not None
    assert touched.version != seen.version

    await fs.edit_text(target, FsEditRequest(old_string="alpha", new_string="beta"), seen.version)
    assert path.read_text(encoding="utf-8") == "beta\n"


async def test_identical_rewrite_by_another_program_is_not_stale(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    assert seen is not None
    async with fs.stream_text(target) as chunks:
        assert "".join([chunk async for chunk in chunks]) == "alpha\n"
    replacement = tmp_path / "other.tmp"
    replacement.write_text("alpha\n", encoding="utf-8")
    os.replace(replacement, path)  # a new inode with the same bytes (an editor's save)

    outcome = await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version))
    assert outcome.before == "alpha\n"
    assert path.read_text(encoding="utf-8") == "mine\n"


async def test_a_real_change_after_a_touch_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    assert seen is not None
    await fs.read_text(target)
    path.write_text("alpha\nextra\n", encoding="utf-8")
    os.utime(path, ns=(10**18, 10**18))
    with pytest.raises(FsError) as stale:
        await fs.edit_text(target, FsEditRequest(old_string="alpha", new_string="b"), seen.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION


def fake_stat(size: int, changed_ns: int) -> os.stat_result:
    # (mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime) + the *_ns fields
    seconds = changed_ns // 10**9
    return os.stat_result(
        (0o100644, 7, 1, 1, 0, 0, size, seconds, seconds, seconds)
        + (float(seconds),) * 3
        + (changed_ns,) * 3
    )


def test_only_small_or_racy_content_is_fingerprinted_on_read() -> None:
    book = VersionBook()
    long_ago = time.time_ns() - 3600 * 10**9
    assert book.wants_digest(fake_stat(DIGEST_LIMIT, long_ago))
    assert not book.wants_digest(fake_stat(DIGEST_LIMIT + 1, long_ago))
    assert book.wants_digest(fake_stat(DIGEST_LIMIT + 1, time.time_ns()))
    assert not book.is_racy(fake_stat(10, long_ago))


def test_without_a_remembered_digest_the_tuple_decides_alone() -> None:
    book = VersionBook()
    old = fake_stat(10, time.time_ns() - 3600 * 10**9)
    touched = fake_stat(10, time.time_ns() - 1800 * 10**9)

    def content() -> bytes:
        raise AssertionError("content must not be read when nothing is remembered")

    assert book.is_current(book.version(old), old, content)
    assert not book.is_current(book.version(old), touched, content)


def test_coarse_granularity_truncates_the_timestamps_in_versions() -> None:
    coarse = VersionBook(timestamp_granularity_ns=10**9)
    assert coarse.version(fake_stat(1, 5 * 10**9 + 1)) == coarse.version(
        fake_stat(1, 5 * 10**9 + 7)
    )
    with pytest.raises(ValueError, match="at least 1"):
        VersionBook(timestamp_granularity_ns=0)


async def test_touch_after_our_own_write_is_not_stale(tmp_path: Path) -> None:
    # The written content's digest is deferred (the provider keeps the bytes): the touch
    # makes the check compute it from them.
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, "alpha\n")
    os.utime(tmp_path / "a.txt", ns=(10**18, 10**18))
    await fs.edit_text(
        target, FsEditRequest(old_string="alpha", new_string="beta"), written.version
    )
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "beta\n"


async def test_touch_after_our_own_edit_is_not_stale(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    edited = await fs.edit_text(target, FsEditRequest(old_string="alpha", new_string="beta"))
    os.utime(tmp_path / "a.txt", ns=(10**18, 10**18))
    outcome = await fs.write_text(target, "gamma\n", ReplaceIfVersion(edited.version))
    assert outcome.before == "beta\n"


def kept(text: str) -> EncodedText:
    return EncodedText((text.encode(),), text=text)


def test_a_deferred_digest_is_computed_once_when_a_check_needs_it() -> None:
    book = VersionBook()
    calls: list[bytes] = []

    def compute() -> bytes:
        calls.append(b"alpha\n")
        return digest(b"alpha\n")

    info = fake_stat(6, time.time_ns())
    version = book.remember(info, compute)
    assert calls == []
    touched = fake_stat(6, time.time_ns() + 10**9)
    assert book.is_current(version, touched, lambda: b"alpha\n")
    assert not book.is_current(version, touched, lambda: b"omega\n")
    assert len(calls) == 1


def test_a_kept_copy_pushed_out_by_the_budget_settles_its_digest() -> None:
    # Pushed out, the bytes are gone: a racy same-tick rewrite must still be caught, so the
    # digest is computed as the copy goes.
    book = VersionBook()
    recent = RecentlyPublished(budget=64, release=book.release)
    first = fake_stat(6, time.time_ns())
    version = book.remember(first, partial(digest, b"alpha\n"))
    assert recent.keep("a", version, EncodedText((b"alpha\n",))) is not None
    big = EncodedText((b"x" * 16,))
    for key in "bcdefgh":
        recent.keep(key, book.remember(fake_stat(16, time.time_ns()), b"\0" * 32), big)
    assert recent.match("a", version, lambda: b"alpha\n") is None  # pushed out
    seen = book.lookup(version)
    assert seen is not None
    assert seen.digest == digest(b"alpha\n")
    assert not book.is_current(version, first, lambda: b"omega\n")


def test_a_deferred_digest_of_a_replaced_publication_is_dropped() -> None:
    book = VersionBook()
    recent = RecentlyPublished(release=book.release)

    def never() -> bytes:
        raise AssertionError("a replaced publication's digest is never computed")

    old = book.remember(fake_stat(6, time.time_ns()), never)
    recent.keep("a", old, kept("alpha\n"))
    new = book.remember(fake_stat(5, time.time_ns() + 1), partial(digest, b"beta\n"))
    recent.keep("a", new, kept("beta\n"))
    assert book.lookup(old) is None
    assert book.lookup(new) is not None


def test_only_a_computed_digest_taken_outside_the_racy_window_is_settled() -> None:
    # A settled digest is not computed again by the next read of its version; one taken
    # while racy is, since a same-tick rewrite may have changed the content meanwhile.
    book = VersionBook()
    old = fake_stat(6, time.time_ns() - 3600 * 10**9)
    racy = fake_stat(6, time.time_ns())
    deferred = fake_stat(7, time.time_ns() - 3600 * 10**9)
    assert not book.settled(book.version(old))  # nothing remembered
    settled = book.remember(old, digest(b"alpha\n"))
    unsettled = book.remember(racy, digest(b"alpha\n"))
    lazy = book.remember(deferred, partial(digest, b"alpha!\n"))
    assert book.settled(settled)
    assert not book.settled(unsettled)
    assert not book.settled(lazy)


async def test_a_reread_after_a_same_tick_rewrite_makes_the_new_content_current(
    tmp_path: Path,
) -> None:
    # The read of the racy version remembers what it read each time, never only the first
    # time: the model saw the new bytes, so an edit against that version goes through.
    path = tmp_path / "a.txt"
    path.write_bytes(b"alpha\n")
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    first = await fs.read_small(target, 1024)
    rewrite_in_place(path, b"omega\n")
    second = await fs.read_small(target, 1024)
    assert first is not None
    assert second is not None
    assert second.decoded is not None
    assert second.info.version == first.info.version
    assert second.decoded.text == "omega\n"
    await fs.edit_text(
        target, FsEditRequest(old_string="omega", new_string="beta"), second.info.version
    )
    assert path.read_bytes() == b"beta\n"
