"""A write over a large file this provider published last, which another program rewrote in
place in the same timestamp tick (same size: the version unchanged), replaces what that
program wrote, as a write by a provider that never published the file would: `before` is
the other program's text, a guarded write is stale, and the file's new BOM is kept. The
kept copy of our publication (`RecentlyPublished`) must never stand in for the file unproven,
however the proof is made (a byte compare today; issue 44 tried one beside the staging).

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsVersion, FsWriteOutcome, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._mutations import BESIDE_CHECK_BYTES

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick (a 1000 s one
# was crossed once in a while between two steps of a test)
LINE = "caf\u00e9 \u2014 line\n"
OURS = LINE * (BESIDE_CHECK_BYTES // len(LINE.encode()) + 100)
THEIRS = OURS.replace("line", "LINE")  # the same size in bytes
BOM = b"\xef\xbb\xbf"


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Another program rewriting the file without dsh-fs: same inode, same size."""
    assert len(data) == path.stat().st_size
    with path.open("r+b") as f:
        f.write(data)


def made(directory: Path) -> Path:
    """`directory`, created."""
    directory.mkdir()
    return directory


async def published_then_rewritten(
    tmp_path: Path, theirs: bytes
) -> tuple[LocalFileSystem, FsVersion]:
    """A provider that wrote `OURS` to ``a.txt``, which another program then rewrote with
    `theirs` in the same tick; returns it and the version it published."""
    fs = LocalFileSystem(made(tmp_path), timestamp_granularity_ns=COARSE)
    written = await fs.write_text(await fs.resolve("a.txt"), OURS)
    rewrite_in_place(tmp_path / "a.txt", theirs)
    now = await fs.stat(await fs.resolve("a.txt"))
    assert now is not None
    assert now.version == written.version  # the version alone cannot tell
    return fs, written.version


async def write_fresh(tmp_path: Path, prior: bytes, content: str) -> FsWriteOutcome:
    """The same write by a provider that never published the file (nothing to assume)."""
    (made(tmp_path) / "a.txt").write_bytes(prior)
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    return await fs.write_text(await fs.resolve("a.txt"), content)


async def test_a_write_over_our_own_unchanged_publication_reports_it_as_before(
    tmp_path: Path,
) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, OURS)
    descriptors = len(os.listdir("/proc/self/fd"))
    outcome = await fs.write_text(target, THEIRS)
    assert outcome.before == OURS
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == THEIRS
    # The proof's descriptor is closed by the time the write returns.
    assert len(os.listdir("/proc/self/fd")) == descriptors


async def test_a_same_tick_rewrite_of_our_publication_is_what_the_next_write_replaces(
    tmp_path: Path,
) -> None:
    fs, _ = await published_then_rewritten(tmp_path / "ours", THEIRS.encode())
    outcome = await fs.write_text(await fs.resolve("a.txt"), "mine\n")
    assert outcome.before == THEIRS
    assert (tmp_path / "ours" / "a.txt").read_bytes() == b"mine\n"
    assert os.listdir(tmp_path / "ours") == ["a.txt"]  # nothing staged is left behind
    fresh = await write_fresh(tmp_path / "fresh", THEIRS.encode(), "mine\n")
    assert (outcome.operation, outcome.before) == (fresh.operation, fresh.before)


async def test_a_same_tick_rewrite_of_our_publication_makes_a_guarded_write_stale(
    tmp_path: Path,
) -> None:
    fs, version = await published_then_rewritten(tmp_path / "ours", THEIRS.encode())
    with pytest.raises(FsError) as stale:
        await fs.write_text(await fs.resolve("a.txt"), "mine\n", ReplaceIfVersion(version))
    assert stale.value.code is FsErrorCode.STALE_VERSION
    assert (tmp_path / "ours" / "a.txt").read_bytes() == THEIRS.encode()
    assert os.listdir(tmp_path / "ours") == ["a.txt"]


async def test_a_same_tick_rewrite_with_a_bom_gets_the_new_content_with_its_bom(
    tmp_path: Path,
) -> None:
    # The write keeps the encoding of the file it replaces (SPEC §12): the content staged
    # without a BOM, on the assumption, is not what is published.
    theirs = BOM + OURS.encode()[len(BOM) :]
    fs, _ = await published_then_rewritten(tmp_path / "ours", theirs)
    outcome = await fs.write_text(await fs.resolve("a.txt"), "mine\n")
    assert (tmp_path / "ours" / "a.txt").read_bytes() == BOM + b"mine\n"
    fresh = await write_fresh(tmp_path / "fresh", theirs, "mine\n")
    assert (tmp_path / "fresh" / "a.txt").read_bytes() == BOM + b"mine\n"
    assert (outcome.before, outcome.after) == (fresh.before, fresh.after)
