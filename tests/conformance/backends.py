"""The backends the provider conformance suite runs against.

A `Backend` names a provider configuration, declares its capabilities and knows how to
build a `ProviderUnderTest`: the provider, the base its relative paths resolve against, and
an `Outside` view of the same storage that reads and mutates it out of band (never through
the provider), so every test can check what really landed in storage.

Adding a backend is one entry in `BACKENDS`.
"""

from __future__ import annotations

import functools
import os
import stat
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import EncodingRules, Encodings, FileSystem, FsCapabilities, JournalStore
from dsh_fs.providers import (
    FsspecFileSystem,
    LocalFileSystem,
    LocalJournalStore,
    SandboxFileSystem,
)
from dsh_fs.providers.sandbox._filesystem import SandboxMode

__all__ = [
    "BACKENDS",
    "ENCODINGS",
    "Backend",
    "LocalOutside",
    "Outside",
    "ProviderUnderTest",
    "fails",
    "journal_store",
    "require",
]


class Outside(ABC):
    """Out-of-band access to the storage a provider works on. Paths are relative to the
    provider's base, ``/``-separated."""

    @abstractmethod
    def write_bytes(self, rel: str, data: bytes) -> None:
        """Create or overwrite `rel` (creating parent directories)."""

    @abstractmethod
    def read_bytes(self, rel: str) -> bytes | None:
        """The bytes stored at `rel`, or None when absent."""

    @abstractmethod
    def exists(self, rel: str) -> bool:
        """Whether anything is stored at `rel`."""

    @abstractmethod
    def remove(self, rel: str) -> None:
        """Delete the file (or empty directory) at `rel`."""

    @abstractmethod
    def mkdir(self, rel: str) -> None:
        """Create the directory `rel` and its parents."""

    @abstractmethod
    def listing(self, rel: str = "") -> list[str]:
        """Names directly under `rel`, hidden ones included (to spot residue)."""

    # Only for backends whose capabilities say so.

    def symlink(self, rel_link: str, rel_target: str) -> None:
        """Create `rel_link` pointing at `rel_target` (as a relative link). `symlinks`."""
        raise NotImplementedError

    def is_symlink(self, rel: str) -> bool:
        """Whether `rel` itself is a symlink. `symlinks`."""
        raise NotImplementedError

    def mkfifo(self, rel: str) -> None:
        """Create a FIFO at `rel`. `special_files`."""
        raise NotImplementedError

    def chmod(self, rel: str, mode: int) -> None:
        """Set the permission bits of `rel`. `posix_modes`."""
        raise NotImplementedError

    def mode(self, rel: str) -> int:
        """The permission bits of `rel`. `posix_modes`."""
        raise NotImplementedError


class LocalOutside(Outside):
    """Out-of-band access to a directory on the host filesystem."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, rel: str) -> Path:
        return self.root / rel if rel else self.root

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self._path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return self._path(rel).read_bytes()
        except FileNotFoundError:
            return None

    def exists(self, rel: str) -> bool:
        return os.path.lexists(self._path(rel))

    def remove(self, rel: str) -> None:
        path = self._path(rel)
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()

    def mkdir(self, rel: str) -> None:
        self._path(rel).mkdir(parents=True, exist_ok=True)

    def listing(self, rel: str = "") -> list[str]:
        return sorted(os.listdir(self._path(rel)))

    def symlink(self, rel_link: str, rel_target: str) -> None:
        link = self._path(rel_link)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(self._path(rel_target), link.parent))

    def is_symlink(self, rel: str) -> bool:
        return self._path(rel).is_symlink()

    def mkfifo(self, rel: str) -> None:
        os.mkfifo(self._path(rel))

    def chmod(self, rel: str, mode: int) -> None:
        os.chmod(self._path(rel), mode)

    def mode(self, rel: str) -> int:
        return stat.S_IMODE(os.stat(self._path(rel)).st_mode)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderUnderTest:
    """A provider plus an out-of-band view of the storage behind it."""

    fs: FileSystem
    """The provider under test."""
    base: str
    """What relative paths resolve against, as display paths spell it (no trailing ``/``)."""
    outside: Outside
    """Reads and mutates the same storage without going through `fs`."""

    @property
    def capabilities(self) -> FsCapabilities:
        """The provider's declared capabilities."""
        return self.fs.capabilities

    def display(self, rel: str) -> str:
        """The display path `fs` gives the relative path `rel`."""
        return f"{self.base}/{rel}" if rel else self.base


@dataclass(frozen=True, slots=True, kw_only=True)
class Backend:
    """One configuration the conformance suite runs against."""

    name: str
    """The pytest id."""
    capabilities: FsCapabilities
    """What the provider declares; tests skip by flag, never by name."""
    factory: Callable[[Path], AbstractAsyncContextManager[ProviderUnderTest]]
    """Builds the provider over fresh storage; gets a private scratch directory."""
    portable: bool = False
    """Run with the portable code paths forced (`dsh_fs._platform.PORTABLE`: what macOS
    and other systems take: no ``/proc``, no ``renameat2``, no ``O_PATH``)."""


ENCODINGS = Encodings(
    rules={
        "legacy/": "cp1252",
        "*.l1": "latin-1",
        "*.sjis": "shift_jis",
        "*.gbk": "gbk",
        "*.u16le": "utf-16-le",
        "*.u8bom": "utf-8-sig",
    }
)
"""The encodings every backend is built with (SPEC §12): only paths the encoding tests
use match them, so every other test runs with rules present and unmatched."""


def _encodings(root: str | Path) -> EncodingRules:
    """`ENCODINGS` against `root` (a URL, or a directory as spelled and as its real path)."""
    roots = [str(root)] if isinstance(root, str) else [str(root), os.path.realpath(root)]
    return EncodingRules.compile(ENCODINGS, dict.fromkeys(roots))


@asynccontextmanager
async def local_backend(scratch: Path) -> AsyncIterator[ProviderUnderTest]:
    """`LocalFileSystem` over a fresh directory."""
    root = scratch / "workspace"
    root.mkdir()
    fs = LocalFileSystem(root, encodings=_encodings(root))
    try:
        yield ProviderUnderTest(fs=fs, base=str(root), outside=LocalOutside(root))
    finally:
        await fs.aclose()


def sandbox_backend(
    mode: SandboxMode,
) -> Callable[[Path], AbstractAsyncContextManager[ProviderUnderTest]]:
    """`SandboxFileSystem` in `mode`, fenced in to a fresh directory (display paths use its
    canonical path). ``read-only`` is covered by tests/providers/test_sandbox.py: the suite
    has no capability flag for "every mutation refused"."""

    @asynccontextmanager
    async def factory(scratch: Path) -> AsyncIterator[ProviderUnderTest]:
        root = scratch / "workspace"
        root.mkdir()
        encodings = _encodings(root)
        fs = SandboxFileSystem([root], mode=mode, encodings=encodings)
        try:
            yield ProviderUnderTest(fs=fs, base=fs.roots[0], outside=LocalOutside(root))
        finally:
            await fs.aclose()

    return factory


class MemoryOutside(Outside):
    """Out-of-band access to fsspec's in-process memory store, through fsspec itself."""

    def __init__(self, root: str) -> None:
        from fsspec.implementations.memory import MemoryFileSystem

        self.fs = MemoryFileSystem()
        self.root = root

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(self._path(rel), data)

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return bytes(self.fs.cat_file(self._path(rel)))
        except FileNotFoundError:
            return None

    def exists(self, rel: str) -> bool:
        return bool(self.fs.exists(self._path(rel)))

    def remove(self, rel: str) -> None:
        path = self._path(rel)
        if self.fs.isdir(path):
            self.fs.rmdir(path)
        else:
            self.fs.rm_file(path)

    def mkdir(self, rel: str) -> None:
        self.fs.makedirs(self._path(rel), exist_ok=True)

    def listing(self, rel: str = "") -> list[str]:
        return sorted(name.rsplit("/", 1)[-1] for name in self.fs.ls(self._path(rel), detail=False))


class S3Outside(Outside):
    """Out-of-band access to a prefix of an S3 bucket, through a plain boto3 client."""

    def __init__(self, client: Any, bucket: str, prefix: str) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if rel else self.prefix

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._key(rel), Body=data)

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            out = self.client.get_object(Bucket=self.bucket, Key=self._key(rel))
        except self.client.exceptions.NoSuchKey:
            return None
        data: bytes = out["Body"].read()
        return data

    def exists(self, rel: str) -> bool:
        if self.read_bytes(rel) is not None:
            return True
        return bool(self._list(rel).get("KeyCount"))

    def remove(self, rel: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(rel))

    def mkdir(self, rel: str) -> None:
        raise NotImplementedError("object stores have key prefixes, not directories")

    def listing(self, rel: str = "") -> list[str]:
        out = self._list(rel)
        names = [o["Key"] for o in out.get("Contents", [])]
        names += [p["Prefix"].rstrip("/") for p in out.get("CommonPrefixes", [])]
        return sorted(name.rsplit("/", 1)[-1] for name in names)

    def _list(self, rel: str) -> dict[str, Any]:
        out: dict[str, Any] = self.client.list_objects_v2(
            Bucket=self.bucket, Prefix=self._key(rel) + "/", Delimiter="/"
        )
        return out


@asynccontextmanager
async def fsspec_memory_backend(scratch: Path) -> AsyncIterator[ProviderUnderTest]:
    """`FsspecFileSystem` over ``memory://`` (a fresh root in fsspec's process-wide store)."""
    root = f"conformance-{uuid.uuid4().hex}"
    url = f"memory://{root}"
    fs = FsspecFileSystem.from_url(url, encodings=_encodings(url))
    outside = MemoryOutside(f"/{root}")
    try:
        yield ProviderUnderTest(fs=fs, base=fs.root, outside=outside)
    finally:
        await fs.aclose()
        if outside.fs.exists(f"/{root}"):
            outside.fs.rm(f"/{root}", recursive=True)


@asynccontextmanager
async def fsspec_s3_backend(scratch: Path) -> AsyncIterator[ProviderUnderTest]:
    """`FsspecFileSystem` over s3fs on moto's S3 server on loopback (a fresh prefix)."""
    from tests.s3_server import shared_server

    server = shared_server()
    bucket, prefix = _conformance_bucket(), uuid.uuid4().hex
    # fsspec's instance cache lets every test reuse one s3fs client (and its connections).
    options = server.storage_options(independent=False)
    url = f"s3://{bucket}/{prefix}"
    fs = FsspecFileSystem.from_url(url, encodings=_encodings(url), **options)
    try:
        yield ProviderUnderTest(
            fs=fs, base=fs.root, outside=S3Outside(server.client(), bucket, prefix)
        )
    finally:
        await fs.aclose()


@functools.cache
def _conformance_bucket() -> str:
    from tests.s3_server import shared_server

    return shared_server().new_bucket()


BACKENDS: list[Backend] = [
    Backend(name="local", capabilities=LocalFileSystem.capabilities, factory=local_backend),
    Backend(
        name="sandbox-workspace-write",
        capabilities=SandboxFileSystem.capabilities,
        factory=sandbox_backend("workspace-write"),
    ),
    Backend(
        name="sandbox-full-access",
        capabilities=SandboxFileSystem.capabilities,
        factory=sandbox_backend("full-access"),
    ),
    Backend(
        name="local-portable",
        capabilities=LocalFileSystem.capabilities,
        factory=local_backend,
        portable=True,
    ),
    Backend(
        name="sandbox-workspace-write-portable",
        capabilities=SandboxFileSystem.capabilities,
        factory=sandbox_backend("workspace-write"),
        portable=True,
    ),
    Backend(
        name="sandbox-full-access-portable",
        capabilities=SandboxFileSystem.capabilities,
        factory=sandbox_backend("full-access"),
        portable=True,
    ),
    Backend(
        name="fsspec-memory",
        capabilities=FsCapabilities(directories=True, content_versions=True),
        factory=fsspec_memory_backend,
    ),
    Backend(
        name="fsspec-s3",
        capabilities=FsCapabilities(
            cross_process_guards=True, directories=False, content_versions=True
        ),
        factory=fsspec_s3_backend,
    ),
]
"""Every backend the suite runs against; add one entry per provider configuration."""


def journal_store(put: ProviderUnderTest, scratch: Path) -> JournalStore:
    """A change journal's store for the provider under test, where that backend keeps one:
    a local directory beside the root for local disks, the storage's own hidden sibling
    prefix for fsspec (memory, S3)."""
    if isinstance(put.fs, FsspecFileSystem):
        return put.fs.journal_store()
    return LocalJournalStore(str(scratch / "journal"), put.base)


def require(put: ProviderUnderTest, capability: str) -> None:
    """Skip the calling test unless the backend declares `capability` (named in the reason)."""
    if not getattr(put.capabilities, capability):
        pytest.skip(f"backend lacks capability {capability}")


@contextmanager
def fails(code: FsErrorCode, message: str | None = None) -> Iterator[pytest.ExceptionInfo[FsError]]:
    """Expect an `FsError` with `code` and, when given, exactly `message`."""
    with pytest.raises(FsError) as info:
        yield info
    assert info.value.code is code, repr(info.value)
    if message is not None:
        assert info.value.message == message, f"{info.value.message!r} != {message!r}"
