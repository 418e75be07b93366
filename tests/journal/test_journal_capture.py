"""What a journaled change costs on its way (issue 36): the record and the pre-image are made
durable while the content is staged, the line counts come from bytes already in memory and
the digest is the provider's own; none of it loses durability before publication (a change
whose publication fails leaves no entry and no stray)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

import dsh_fs.providers._journal_records as records
import dsh_fs.providers.local._journal_store as local_store
import dsh_fs.providers.local._publish as publication
from dsh_fs import Workspace

pytestmark = pytest.mark.anyio

_TEXT = "".join(f"line {n}\n" for n in range(200))


def _sub_store(store: Path) -> Path:
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


async def test_line_counts_come_from_the_bytes_the_provider_holds_not_a_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text(_TEXT)
    (root / "b.cp").write_bytes("caf\u00e9\n".encode("cp1252"))
    reads: list[object] = []
    read_kept = local_store.read_kept

    def counted(kept: Any, limit: int | None = None) -> bytes | None:
        reads.append(kept)
        return read_kept(kept, limit)

    monkeypatch.setattr(local_store, "read_kept", counted)
    encodings = {"*.cp": "cp1252"}
    async with Workspace.sandbox(root, journal=tmp_path / "store", encodings=encodings) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        edited = await s.call(
            "edit", {"file_path": "a.txt", "old_string": "line 7\n", "new_string": "seven\n"}
        )
        assert not edited.is_error, edited.text
        assert reads == []  # the edit's own copy of the replaced bytes was counted
        written = await s.call("write", {"file_path": "a.txt", "content": "short\n"})
        assert not written.is_error, written.text
        assert reads == []  # the bytes the edit published, kept by the provider
        (root / "c.txt").write_text(_TEXT)
        await s.call("read", {"file_path": "c.txt"})
        (root / "c.txt").write_text(_TEXT.replace("line 9\n", "nine\n"))  # another program
        written = await s.call("write", {"file_path": "c.txt", "content": "short\n"})
        assert written.code == "FS_STALE_VERSION"  # read again first, as the policy asks
        await s.call("read", {"file_path": "c.txt"})
        written = await s.call("write", {"file_path": "c.txt", "content": "short\n"})
        assert not written.is_error, written.text
        assert reads == []  # the prior the write read for its outcome's `before`
        await s.call("read", {"file_path": "b.cp"})
        written = await s.call("write", {"file_path": "b.cp", "content": "tea\n"})
        assert not written.is_error, written.text
        assert len(reads) == 1  # not UTF-8: the provider holds no bytes, the pre-image is read
        entries = await ws.journal.entries()
    write, edit = (e for e in entries if e.rel == "a.txt")
    (other,) = (e for e in entries if e.rel == "c.txt")
    assert (edit.added, edit.removed) == (1, 1)
    assert (write.added, write.removed) == (1, 200)
    assert (other.added, other.removed) == (1, 200)


async def test_a_journaled_change_hashes_its_content_only_where_its_delta_cannot_tell_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The provider keeps the content it published and defers its own digest. Where the
    # forward delta kept with the entry makes the published bytes again from the pre-image
    # (an edit, a small create), the journal hashes nothing: the guard's digest is made
    # from them when an undo needs it. A change whose middle is too large for a delta is
    # hashed once, beside the publication.
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text(_TEXT)
    large = "".join(f"row {n}\n" for n in range(40_000))  # over the delta's 128 KiB
    hashed: list[str] = []

    class Counting:
        @staticmethod
        def sha256(*args: Any) -> Any:
            hashed.append("journal")
            return hashlib.sha256(*args)

    monkeypatch.setattr(records, "hashlib", Counting)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        for call, arguments in [
            ("edit", {"file_path": "a.txt", "old_string": "line 7\n", "new_string": "seven\n"}),
            ("write", {"file_path": "b.txt", "content": "made\n"}),
            ("write", {"file_path": "c.txt", "content": large}),
        ]:
            result = await s.call(call, arguments)
            assert not result.is_error, result.text
        entries = {e.rel: e for e in await ws.journal.entries()}
    assert hashed == ["journal"]
    edit, create, other = entries["a.txt"], entries["b.txt"], entries["c.txt"]
    assert (edit.digest, create.digest, other.delta) == (None, None, None)
    assert other.digest == hashlib.sha256(large.encode()).hexdigest()
    published = edit.published_digest(_TEXT.encode())
    assert published == hashlib.sha256((root / "a.txt").read_bytes()).hexdigest()
    assert create.published_digest(None) == hashlib.sha256(b"made\n").hexdigest()
    # Another pre-image (a damaged store) makes another digest: never the file's.
    assert edit.published_digest(b"other\n") != published


def test_a_change_whose_delta_is_of_its_text_not_its_bytes_keeps_its_digest() -> None:
    # A UTF-16 file's delta is relative to its text as UTF-8, a cp1252 file's too: the
    # pre-image and the delta would not make the published bytes, so they are hashed.
    cases = [
        ("first\nsecond\n".encode("utf-16"), "first\n2nd\n".encode("utf-16"), None),
        ("caf\u00e9\n".encode("cp1252"), "tea\n".encode("cp1252"), "cp1252"),
        (b"first\nsecond\n", b"first\n2nd\n", None),
    ]
    kept = [
        records.content_fields(
            created=False, removed=False, before=before, content=after, codec=codec
        )
        for before, after, codec in cases
    ]
    assert all(fields["delta"] is not None for fields in kept)
    for (_, after, _), fields in zip(cases[:2], kept[:2], strict=True):
        assert fields["digest"] == hashlib.sha256(after).hexdigest()
    assert "digest" not in kept[2]  # UTF-8: the delta makes the very bytes again


async def test_a_publication_that_fails_while_the_record_is_made_leaves_no_entry_and_no_stray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The record is made beside the staging of the content: staging that fails (a full
    # disk in the served folder) waits for the record and takes it back with its pre-image.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text(_TEXT)

    def full(fd: int, staged: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        with monkeypatch.context() as patched:
            patched.setattr(publication, "_fill", full)
            for call, arguments in [
                ("edit", {"file_path": "a.txt", "old_string": "line 7\n", "new_string": "7\n"}),
                ("write", {"file_path": "a.txt", "content": "short\n"}),
            ]:
                result = await s.call(call, arguments)
                assert result.is_error
        assert await ws.journal.entries() == []
        assert sorted(os.listdir(_sub_store(store))) in (["root"], ["lock", "root"])
    assert (root / "a.txt").read_text() == _TEXT
    assert sorted(os.listdir(root)) == ["a.txt"]
