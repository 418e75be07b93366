"""The storage families behind `FsspecFileSystem`: what "version" and "publish" mean on each.

A store speaks fsspec paths (protocol stripped) and plain bytes. Every method is
synchronous and blocking; the provider runs them in worker threads and translates what
they raise in one place (`_errors`). Three families:

- `S3Store` (s3fs): the version is the object's ETag, publication is one `PutObject`,
  guarded by ``If-None-Match: *`` or ``If-Match: <etag>`` so guards hold across processes.
- `MemoryStore` (``memory://``): the version is a SHA-256 of the bytes.
- `GenericStore` (``file://``, SFTP, GCS, Azure, …): the version is the backend's own
  validator when its info has one (``ETag``, GCS ``generation``), else size + mtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import io
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from dsh_fs.fs import FsDirEntry, FsFileType, FsVersion, FsWalkEntry

__all__ = [
    "DIRECTORY_VERSION",
    "Blob",
    "Entry",
    "GenericStore",
    "MemoryStore",
    "Store",
    "digest_version",
    "etag_version",
    "is_content_version",
]

DIRECTORY_VERSION = FsVersion("dir")
"""Directories (and object-store prefixes) carry no content, hence one constant version."""

_META = "meta:"
"""Prefix of versions built from size + mtime: the only ones that can miss a rewrite."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """What `Store.stat` reports about an existing path."""

    type: FsFileType
    """File, directory (or prefix), or other."""
    size: int
    """Size in bytes (0 for directories)."""
    version: FsVersion
    """The version token of this state."""
    mtime_ns: int | None = None
    """Modification time, when the backend reports one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Blob:
    """A regular file's bytes together with the version they were read at."""

    data: bytes | None
    """The content; None when larger than the caller's limit (not read at all)."""
    size: int
    """Size in bytes."""
    version: FsVersion
    """The version of exactly these bytes (same response on S3 and memory)."""


def is_content_version(version: FsVersion) -> bool:
    """Whether `version` changes with every content change (ETag, generation, digest),
    as opposed to size + mtime, which a same-size rewrite within one tick can keep."""
    return not version.startswith(_META)


class Store:
    """Blocking storage operations over one fsspec filesystem (the generic family)."""

    cross_process_guards = False
    """Whether `put` enforces its guards in the storage service itself."""
    directories = True
    """Whether directories exist on their own (False: only as key prefixes)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def stat(self, path: str) -> Entry | None:
        """The entry at `path`, following links; None if nothing is there."""
        try:
            info = self._info(path)
        except FileNotFoundError:
            return None
        kind = _file_type(info)
        if kind is FsFileType.DIRECTORY:
            return Entry(type=kind, size=0, version=DIRECTORY_VERSION)
        return Entry(
            type=kind,
            size=int(info.get("size") or 0),
            version=self._version(path, info),
            mtime_ns=_mtime_ns(info),
        )

    def read(self, path: str, limit: int | None) -> Blob | None:
        """The file at `path` (bytes omitted past `limit`); None if absent.

        Raises:
            IsADirectoryError: `path` is a directory or another non-regular entry.
        """
        entry = self.stat(path)
        if entry is None:
            return None
        if entry.type is not FsFileType.FILE:
            raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
        if limit is not None and entry.size > limit:
            return Blob(data=None, size=entry.size, version=entry.version)
        data = bytes(self.fs.cat_file(path))
        return Blob(data=data, size=len(data), version=entry.version)

    def read_many(self, paths: list[str], limit: int) -> list[Blob | Exception | None]:
        """`read` of each path in turn, in order; what one raises is its answer (the next
        is still read)."""
        answers: list[Blob | Exception | None] = []
        for path in paths:
            try:
                answers.append(self.read(path, limit))
            except Exception as exc:  # the caller maps it, or raises what it cannot map
                answers.append(exc)
        return answers

    def concurrent_reads(
        self, paths: list[str], limit: int
    ) -> (
        tuple[asyncio.AbstractEventLoop, Coroutine[Any, Any, list[Blob | Exception | None]]] | None
    ):
        """`read_many` as a coroutine for the backend's own event loop (requests in flight
        together), with that loop; None when the backend is blocking (the default)."""
        del paths, limit
        return None

    def read_all(self, paths: list[str]) -> dict[str, bytes]:
        """The bytes of each file in `paths` that exists, in one batch (fsspec's `cat`: on
        async backends such as s3fs, concurrent requests); absent ones are left out."""
        if not paths:
            return {}
        found: dict[str, bytes] = self.fs.cat(paths, on_error="omit")
        return {str(self.fs._strip_protocol(path)): bytes(data) for path, data in found.items()}

    def put(
        self, path: str, data: bytes, *, if_absent: bool = False, if_match: FsVersion | None = None
    ) -> FsVersion:
        """Publish `data` at `path`; returns the version of what was published.

        `if_absent` never replaces an existing file (`FileExistsError` if one is there).
        `if_match` is enforced by the caller's in-process critical section only here.
        """
        del if_match
        self._check_parents(path)
        self.fs.makedirs(self.fs._parent(path), exist_ok=True)
        self.fs.pipe_file(path, data, mode="create" if if_absent else "overwrite")
        entry = self.stat(path)
        if entry is None:
            raise FileNotFoundError(errno.ENOENT, "vanished right after publication", path)
        return entry.version

    def make_parents(self, path: str) -> None:
        """Create the missing directories above `path` (none on object stores).

        Raises:
            NotADirectoryError: an ancestor is a file.
        """
        self._check_parents(path)
        if self.directories:
            self.fs.makedirs(self.fs._parent(path), exist_ok=True)

    def copy(
        self,
        source: str,
        destination: str,
        data: bytes,
        *,
        source_version: FsVersion,
        if_absent: bool,
        if_match: FsVersion | None,
    ) -> FsVersion:
        """Publish a copy of the file `source` (whose bytes, at `source_version`, are
        `data`) at `destination`, never replacing anything when `if_absent`; returns the
        copy's version. Here the bytes are written again (`put`); the guards hold within
        the caller's critical section.

        Raises:
            FileExistsError: `if_absent` and something is at `destination`.
        """
        del source, source_version
        return self.put(destination, data, if_absent=if_absent, if_match=if_match)

    def keep(self, source: str, destination: str, version: FsVersion, data: bytes | None) -> None:
        """Keep the file `source`, at `version`, as the new file `destination` (a journal's
        pre-image), inside the caller's critical section: a copy of its bytes (`data` when
        the caller read them at `version`, else read again and checked to be at `version`).

        Raises:
            FileExistsError: something is at `destination` already.
            OSError: ``EAGAIN``, the file is no longer at `version`.
        """
        if data is None:
            blob = self.read(source, None)
            if blob is None or blob.version != version or blob.data is None:
                raise OSError(errno.EAGAIN, "the file was replaced while it was kept", source)
            data = blob.data
        self.put(destination, data, if_absent=True)

    def discard(self, path: str) -> None:
        """Remove the file at `path` unconditionally, if it is there (the journal's own
        records and pre-images)."""
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(path)

    def delete(self, path: str, *, if_match: FsVersion) -> None:
        """Remove the file at `path`. `if_match` (the version the caller checked) is
        enforced by the caller's in-process critical section only here."""
        del if_match
        self.fs.rm_file(path)

    def list_dir(self, path: str) -> list[FsDirEntry]:
        """The direct children of the directory `path`, sorted by name.

        Raises:
            FileNotFoundError: nothing is at `path`.
            NotADirectoryError: `path` is a file.
        """
        entry = self.stat(path)
        if entry is None:
            raise FileNotFoundError(errno.ENOENT, "not found", path)
        if entry.type is not FsFileType.DIRECTORY:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
        return _entries(path, self._ls(path))

    def find(self, path: str) -> list[FsWalkEntry]:
        """Everything below the directory `path` in one listing (paginated by the backend:
        one request per thousand keys on S3, not one per directory), as entries relative to
        `path`, in no particular order. Directories implied by a deeper key are included.
        """
        infos: dict[str, dict[str, Any]] = self._find(path)
        base = path.rstrip("/")
        entries: dict[str, FsWalkEntry] = {}
        for name, info in infos.items():
            rel = name.rstrip("/")[len(base) :].strip("/") if name.startswith(base) else ""
            if not rel:
                continue
            kind = FsFileType.SYMLINK if info.get("islink") else _file_type(info)
            entries[rel] = FsWalkEntry(
                path=rel,
                type=kind,
                size=int(info.get("size") or 0) if kind is FsFileType.FILE else 0,
                mtime_ns=_mtime_ns(info) if kind is FsFileType.FILE else None,
            )
            parent = rel.rpartition("/")[0]
            while parent and parent not in entries:
                entries[parent] = FsWalkEntry(path=parent, type=FsFileType.DIRECTORY, size=0)
                parent = parent.rpartition("/")[0]
        return list(entries.values())

    def _find(self, path: str) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self.fs.find(path, withdirs=True, detail=True)
        return found

    def open(self, path: str, block_size: int) -> IO[bytes]:
        """A binary reader of the regular file `path`.

        Raises:
            FileNotFoundError, IsADirectoryError: as for `read`.
        """
        entry = self.stat(path)
        if entry is None:
            raise FileNotFoundError(errno.ENOENT, "not found", path)
        if entry.type is not FsFileType.FILE:
            raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
        stream: IO[bytes] = self.fs.open(path, "rb", block_size=block_size)
        return stream

    def _info(self, path: str) -> dict[str, Any]:
        info: dict[str, Any] = self.fs.info(path)
        return info

    def _ls(self, path: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = self.fs.ls(path, detail=True)
        return entries

    def _version(self, path: str, info: dict[str, Any]) -> FsVersion:
        del path
        for field, tag in (("ETag", "etag"), ("etag", "etag"), ("generation", "gen")):
            if info.get(field):
                return FsVersion(f"{tag}:{info[field]}")
        mtime = next(
            (
                info[f]
                for f in (
                    "mtime",
                    "LastModified",
                    "last_modified",
                    "updated",
                    "modified",
                    "created",
                )
                if info.get(f) is not None
            ),
            None,
        )
        return FsVersion(f"{_META}{info.get('size')}:{mtime}")

    def _check_parents(self, path: str) -> None:
        """Refuse a path below an existing file (`NotADirectoryError`)."""
        parent = self.fs._parent(path)
        while parent and parent != path:
            entry = self.stat(parent)
            if entry is not None:
                if entry.type is not FsFileType.DIRECTORY:
                    raise NotADirectoryError(errno.ENOTDIR, "not a directory", parent)
                return
            path, parent = parent, self.fs._parent(parent)

    content_versions = False
    """Whether `open_from` vouches for versions (reads pinned to one content)."""

    def open_from(
        self, path: str, block_size: int, start: int
    ) -> tuple[IO[bytes], FsVersion | None]:
        """`open`, positioned at byte `start`, with the version the reads are pinned to when
        the family can pin them (None here: a generic backend's later reads may see newer
        bytes than its info described)."""
        stream = self.open(path, block_size)
        try:
            stream.seek(start)
        except BaseException:
            stream.close()
            raise
        return stream, None


class MemoryStore(Store):
    """``memory://``: content is in process memory, so a digest version is cheap and exact."""

    def stat(self, path: str) -> Entry | None:
        entry = super().stat(path)
        if entry is None:
            self._check_parents(path)  # a path below a file is "not a directory", as on disk
        return entry

    def _check_parents(self, path: str) -> None:
        parent = self.fs._parent(path)
        while parent not in ("", "/"):
            if self.fs.isfile(parent):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", parent)
            parent = self.fs._parent(parent)

    def _version(self, path: str, info: dict[str, Any]) -> FsVersion:
        del info
        return digest_version(bytes(self.fs.cat_file(path)))

    def read(self, path: str, limit: int | None) -> Blob | None:
        try:
            info = self._info(path)
        except FileNotFoundError:
            self._check_parents(path)
            return None
        if _file_type(info) is not FsFileType.FILE:
            raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
        data = bytes(self.fs.cat_file(path))
        # One copy of the bytes, and the version of exactly those bytes.
        version = digest_version(data)
        if limit is not None and len(data) > limit:
            return Blob(data=None, size=len(data), version=version)
        return Blob(data=data, size=len(data), version=version)

    def put(
        self, path: str, data: bytes, *, if_absent: bool = False, if_match: FsVersion | None = None
    ) -> FsVersion:
        del if_match
        self._check_parents(path)
        self.fs.pipe_file(path, data, mode="create" if if_absent else "overwrite")
        return digest_version(data)

    content_versions = True

    def open_from(
        self, path: str, block_size: int, start: int
    ) -> tuple[IO[bytes], FsVersion | None]:
        """A snapshot of the bytes, positioned at `start`, and their digest: the version of
        exactly what will be read."""
        del block_size
        blob = self.read(path, None)
        if blob is None:
            raise FileNotFoundError(errno.ENOENT, "not found", path)
        assert blob.data is not None
        stream = io.BytesIO(blob.data)
        stream.seek(start)
        return stream, blob.version


GenericStore = Store
"""The generic family is the base class itself."""


def _file_type(info: dict[str, Any]) -> FsFileType:
    kind = info.get("type")
    if kind == "file":
        return FsFileType.FILE
    if kind == "directory":
        return FsFileType.DIRECTORY
    return FsFileType.OTHER


def _entries(path: str, infos: list[dict[str, Any]]) -> list[FsDirEntry]:
    entries = [
        FsDirEntry(
            name=info["name"].rstrip("/").rsplit("/", 1)[-1],
            type=FsFileType.SYMLINK if info.get("islink") else _file_type(info),
            size=int(info.get("size") or 0),
            mtime_ns=_mtime_ns(info),
        )
        for info in infos
        if info["name"].rstrip("/") != path.rstrip("/")
    ]
    entries.sort(key=lambda e: (e.name, e.type.value))
    return entries


def _mtime_ns(info: dict[str, Any]) -> int | None:
    for field in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(field)
        if isinstance(value, datetime):
            return int(value.timestamp() * 1_000_000_000)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value * 1_000_000_000)
    return None


def digest_version(data: bytes) -> FsVersion:
    return FsVersion("sha256:" + hashlib.sha256(data).hexdigest())


def etag_version(etag: str) -> FsVersion:
    return FsVersion("etag:" + etag)
