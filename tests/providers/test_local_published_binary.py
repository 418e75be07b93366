"""Content with a NUL is not kept as the local provider's last publication
(`RecentlyPublished`): an edit takes what is kept as its prior text without checking it, so
a file it published with a NUL must be read and refused as binary (SPEC §3), as one another
program wrote is. Its digest, deferred because the content was to be kept, settles at once:
a same-size rewrite in the same timestamp tick is still caught.

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import EncodedText, FsVersion, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._versions import RecentlyPublished

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick


def test_content_with_a_nul_is_not_kept_and_forgets_what_was() -> None:
    released: list[tuple[FsVersion, bool]] = []
    recent = RecentlyPublished(
        release=lambda version, superseded: released.append((version, superseded))
    )
    text = FsVersion("text")
    assert recent.keep("a", text, EncodedText((b"alpha\n",), text="alpha\n")) is not None
    binary = FsVersion("binary")
    parts = (b"alpha", memoryview(b"\0beta\n"))
    assert recent.keep("a", binary, EncodedText(parts)) is None
    assert released == [(text, True)]
    assert recent.match("a", binary, lambda: b"alpha\0beta\n") is None


async def test_a_same_tick_rewrite_of_a_file_written_with_a_nul_is_stale(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    written = await fs.write_text(target, "alpha\0beta\n")
    with (tmp_path / "a.txt").open("r+b") as f:
        f.write(b"omega\0beta\n")  # another program, in place: same inode, size and tick
    now = await fs.stat(target)
    assert now is not None
    assert now.version == written.version  # the version alone cannot tell
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "text\n", ReplaceIfVersion(written.version))
    assert info.value.code is FsErrorCode.STALE_VERSION
    assert (tmp_path / "a.txt").read_bytes() == b"omega\0beta\n"
