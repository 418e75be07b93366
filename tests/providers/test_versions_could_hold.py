"""`VersionBook.could_hold`: the part of `is_current` that needs no content, which the local
provider's `read_decoded_at` asks before it reads a file whole (a change set staged on a
file changed since is stale without reading it). It must never say no where `is_current`
would say yes."""

from __future__ import annotations

import os
from pathlib import Path

from dsh_fs.fs import FsVersion
from dsh_fs.providers.local._versions import VersionBook, digest


def test_could_hold_is_false_only_where_is_current_is_false_whatever_the_content(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\n")
    book = VersionBook()
    seen = path.stat()
    version = book.remember(seen, digest(b"one\n"))

    def agree(expected: FsVersion, expect: bool) -> None:
        info = path.stat()
        data = path.read_bytes()
        assert book.could_hold(expected, info) is expect
        if not expect:
            assert not book.is_current(expected, info, lambda: data)

    agree(version, True)  # the same version
    os.utime(path, ns=(seen.st_atime_ns + 10**9, seen.st_mtime_ns + 10**9))
    agree(version, True)  # a touch: the same size as the content known there
    path.write_bytes(b"two\n")
    agree(version, True)  # the same size: only the content can tell
    path.write_bytes(b"three\n")
    agree(version, False)  # another size
    fresh = VersionBook()
    agree(fresh.version(seen), False)  # a version that moved, nothing known at the old one
