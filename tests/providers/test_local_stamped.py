"""A publication of content the local provider keeps is stamped (`_publish.Staged.stamp`):
its modification time is one nanosecond after the one the kernel gave it, a time no change
of the file can be stamped with. The next mutation then knows the file unchanged from its
version alone, without comparing bytes; a same-size rewrite right after the publication
still changes the version, and a version book that truncates timestamps (a filesystem
with coarse ones, faked with `timestamp_granularity_ns`) gets no stamp and compares."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs import _platform
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest, FsVersion, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import _io, _mutations
from dsh_fs.providers.local._versions import Published

pytestmark = pytest.mark.anyio

COARSE = 10**15
TEXT = "alpha beta gamma\n" * 4096


def kept(fs: LocalFileSystem, path: Path, version: FsVersion) -> Published | None:
    return fs._mutations._recent.at(str(path), version)


def forbid_compares(monkeypatch: pytest.MonkeyPatch) -> None:
    def compared(self: _io.LazyContent, parts: object) -> bool:
        raise AssertionError("a stamped publication was compared byte by byte")

    monkeypatch.setattr(_io.LazyContent, "holds", compared)


def count_compares(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every byte compare of a prior from now on, recorded (and made)."""
    compares: list[object] = []
    holds = _io.LazyContent.holds

    def counted(self: _io.LazyContent, parts: tuple[bytes, ...]) -> bool:
        compares.append(parts)
        return holds(self, parts)

    monkeypatch.setattr(_io.LazyContent, "holds", counted)
    return compares


async def test_a_kept_write_is_stamped_where_versions_keep_nanoseconds(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    written = await fs.write_text(await fs.resolve("a.txt"), TEXT)
    published = kept(fs, tmp_path / "a.txt", written.version)
    assert published is not None
    assert published.stamped


async def test_the_next_write_and_edit_take_a_stamped_prior_uncompared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    first = await fs.write_text(target, TEXT)
    forbid_compares(monkeypatch)
    second = await fs.write_text(target, TEXT + "delta\n", ReplaceIfVersion(first.version))
    assert second.before == TEXT
    edited = await fs.edit_text(
        target, FsEditRequest(old_string="delta\n", new_string="epsilon\n"), second.version
    )
    assert (tmp_path / "a.txt").read_text() == TEXT + "epsilon\n"
    unguarded = await fs.write_text(target, "omega\n")
    assert unguarded.before == TEXT + "epsilon\n"
    assert kept(fs, tmp_path / "a.txt", edited.version) is None  # replaced since


async def test_a_same_size_rewrite_right_after_a_stamped_write_changes_the_version(
    tmp_path: Path,
) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, TEXT)
    theirs = TEXT.replace("beta", "BETA").encode()
    with (tmp_path / "a.txt").open("r+b") as f:  # another program, in place: same size
        f.write(theirs)
    now = await fs.stat(target)
    assert now is not None
    assert now.version != written.version
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(written.version))
    assert info.value.code is FsErrorCode.STALE_VERSION
    assert (tmp_path / "a.txt").read_bytes() == theirs
    replaced = await fs.write_text(target, "mine\n")
    assert replaced.before == theirs.decode()


async def test_a_stamp_is_one_nanosecond_past_the_kernels_time(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, TEXT)
    stamped = os.stat(tmp_path / "a.txt").st_mtime_ns
    # A change now is stamped by the kernel, at its tick's time or (a multigrain kernel,
    # after a stat) at its fine clock: never at the stamp.
    with (tmp_path / "a.txt").open("r+b") as f:
        f.write(b"A")
    assert os.stat(tmp_path / "a.txt").st_mtime_ns != stamped


async def test_coarse_versions_are_not_stamped_and_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, TEXT)
    published = kept(fs, tmp_path / "a.txt", written.version)
    assert published is not None
    assert not published.stamped
    compares = count_compares(monkeypatch)
    await fs.write_text(target, "next\n", ReplaceIfVersion(written.version))
    assert len(compares) == 1


async def test_an_inode_drawn_again_is_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another publisher stamping the same way, in the same tick, into an inode of the same
    # number drawn again, would leave the same tuple: the inode's generation tells them
    # apart, and a generation that differs sends the check back to the bytes.
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, TEXT)
    published = kept(fs, tmp_path / "a.txt", written.version)
    assert published is not None
    assert published.generation is not None
    compares = count_compares(monkeypatch)
    monkeypatch.setattr(_mutations, "inode_generation", lambda fd: published.generation + 1)
    again = await fs.write_text(target, TEXT + "more\n", ReplaceIfVersion(written.version))
    assert again.before == TEXT
    assert len(compares) == 1


@pytest.mark.parametrize("refusal", ["generation", "utime"])
async def test_no_generation_or_no_settable_time_is_no_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: str
) -> None:
    if refusal == "generation":
        monkeypatch.setattr(_platform, "inode_generation", lambda fd: None)
    else:

        def refused(*args: object, **kwargs: object) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "utime", refused)
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, TEXT)
    assert (tmp_path / "a.txt").read_text() == TEXT
    published = kept(fs, tmp_path / "a.txt", written.version)
    assert published is not None
    assert not published.stamped
    await fs.write_text(target, "next\n", ReplaceIfVersion(written.version))
