"""A guarded write given the bytes its caller read at the version (`ReplaceIfVersion.content`,
what a change set's publication passes): the local provider compares them with the file where
it would otherwise hash it, never weaker than the version book's digest, and reads nothing
where the version alone decides.

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._versions import VersionBook, digest

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick (a 1000 s one
# was crossed once in a while between two steps of a test)
ALPHA = b"alpha\n" * 100
OMEGA = b"omega\n" * 100  # the same size


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Another program rewriting the file without dsh-fs: same inode, same size."""
    with path.open("r+b") as f:
        f.write(data)


class Reads:
    """A file's content as `VersionBook.holds` asks for it, counting the asks."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.count = 0

    def __call__(self) -> bytes:
        self.count += 1
        return self.data


def test_holds_compares_the_bytes_of_a_racy_version(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    book = VersionBook()
    info = os.stat(path)
    version = book.remember(info, digest(ALPHA))  # just written: racy
    assert book.holds(version, info, Reads(ALPHA), ALPHA)
    assert not book.holds(version, info, Reads(OMEGA), ALPHA)


def test_holds_trusts_a_version_known_not_racy_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    info = os.stat(path)
    later = max(info.st_mtime_ns, info.st_ctime_ns) + 10 * 10**9
    book = VersionBook(clock=lambda: later)
    version = book.remember(info, digest(ALPHA))
    reads = Reads(OMEGA)
    assert book.holds(version, info, reads, ALPHA)
    assert reads.count == 0


def test_holds_compares_the_bytes_of_a_version_it_knows_nothing_of(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    book = VersionBook()
    info = os.stat(path)
    version = book.version(info)
    assert book.holds(version, info, Reads(ALPHA), ALPHA)
    assert not book.holds(version, info, Reads(OMEGA), ALPHA)


def test_holds_takes_a_touched_file_with_the_same_bytes_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    book = VersionBook()
    version = book.version(os.stat(path))
    os.utime(path, ns=(0, 10**9))
    touched = os.stat(path)
    assert book.version(touched) != version
    assert book.holds(version, touched, Reads(ALPHA), ALPHA)
    assert not book.holds(version, touched, Reads(OMEGA), ALPHA)
    shorter = Reads(ALPHA[:-1])
    assert not book.holds(version, touched, shorter, ALPHA[:-1] + b"!")
    path.write_bytes(ALPHA + b"more\n")
    grown = Reads(ALPHA + b"more\n")
    assert not book.holds(version, os.stat(path), grown, ALPHA)
    assert grown.count == 0  # another size: no read needed to tell


async def test_a_write_given_the_bytes_read_is_stale_after_a_same_tick_rewrite(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    assert await fs.read_text(target) == ALPHA.decode()
    seen = await fs.stat(target)
    assert seen is not None
    rewrite_in_place(path, OMEGA)
    with pytest.raises(FsError) as stale:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version, ALPHA))
    assert stale.value.code is FsErrorCode.STALE_VERSION
    assert path.read_bytes() == OMEGA
    outcome = await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version, OMEGA))
    assert outcome.before == OMEGA.decode()
    assert path.read_bytes() == b"mine\n"


async def test_the_bytes_read_refuse_a_rewrite_a_later_read_made_the_version_book_accept(
    tmp_path: Path,
) -> None:
    """Stronger than the digest: after a same-tick rewrite, a read of the new bytes makes the
    book vouch for them at the same version; a caller who read the old ones is still told
    the file changed."""
    path = tmp_path / "a.txt"
    path.write_bytes(ALPHA)
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    await fs.read_text(target)
    seen = await fs.stat(target)
    assert seen is not None
    rewrite_in_place(path, OMEGA)
    assert await fs.read_text(target) == OMEGA.decode()  # the book now has OMEGA's digest
    with pytest.raises(FsError) as stale:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version, ALPHA))
    assert stale.value.code is FsErrorCode.STALE_VERSION
    assert path.read_bytes() == OMEGA


def test_the_local_provider_says_its_reads_are_local(tmp_path: Path) -> None:
    assert LocalFileSystem(tmp_path).capabilities.local_reads
