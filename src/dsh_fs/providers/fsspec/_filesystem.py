"""`FsspecFileSystem`: any fsspec storage (memory, S3, SFTP, …) as a `dsh_fs.fs.FileSystem`.

Paths live under one root URL. Targets are URLs: `target_key` is the normalized URL and
`display_path` the same URL, which is what the user recognizes (``s3://bucket/prefix/a.py``).
Text semantics match the local provider byte for byte; versions and the strength of the
guards depend on the storage family (`_store`). Every backend call runs the blocking
fsspec API in a worker thread; s3fs's own event loop serves it from there.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any, Literal, TypeVar

import anyio
from anyio import to_thread

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    BEFORE_LIMIT,
    UTF8,
    ChangeKind,
    CreateIfAbsent,
    EncodingRules,
    FileSystem,
    FsCapabilities,
    FsCapture,
    FsChangeStart,
    FsDecoded,
    FsDeleteOutcome,
    FsDirEntry,
    FsEdit,
    FsEditOutcome,
    FsEncoding,
    FsFileType,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsPreImage,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    JournalStore,
    ReplaceIfVersion,
    WriteGuard,
    apply_change,
    bom_encoding,
    journal_codec,
    messages,
)

from .._locks import TargetLocks
from .._oserrors import FramesDropped
from .._text import (
    FallbackBook,
    check_usable_path,
    decode_file,
    decode_or_none,
    encode_as,
    encode_text,
    round_trip,
    splice,
)
from ._digests import ContentDigests
from ._errors import backend_error, backend_error_types, map_backend_errors
from ._journal_store import DEFAULT_DIRECTORY, FsspecJournalStore, FsspecKept, FsspecReplaced
from ._paths import normalize
from ._ranged import stream_text_from
from ._set_records import SETS_DIRECTORY, FsspecSetRecords
from ._store import DIRECTORY_VERSION, Blob, MemoryStore, Store, is_content_version
from ._stream import Declared, TextChunks
from ._walk import batches_by_directory

__all__ = ["STREAM_CHUNK_SIZE", "FsspecFileSystem"]

STREAM_CHUNK_SIZE = 4 * 1024 * 1024
"""Bytes per `stream_text` read (one ranged GET per chunk on object stores)."""

_T = TypeVar("_T")


def store_for(fs: Any) -> Store:
    """The family of `fs`: S3 for s3fs, memory for fsspec's memory filesystem, else generic.

    Raises:
        ValueError: `fs` is an async fsspec instance (``asynchronous=True``); the provider
            needs the blocking API, which it runs in worker threads.
    """
    if getattr(fs, "async_impl", False) and getattr(fs, "asynchronous", False):
        raise ValueError("FsspecFileSystem needs an fsspec instance with asynchronous=False")
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    if "s3" in protocols and hasattr(fs, "split_path") and hasattr(fs, "set_session"):
        from ._s3 import S3Store

        return S3Store(fs)
    from fsspec.implementations.memory import MemoryFileSystem

    if isinstance(fs, MemoryFileSystem):
        return MemoryStore(fs)
    return Store(fs)


class FsspecFileSystem(FileSystem):
    """A `FileSystem` over an fsspec filesystem, confined to a root URL.

    Paths:
        - a URL (``s3://bucket/prefix/a.py``) must lie under the root;
        - an absolute path (``/a.py``) is relative to the root, which acts as ``/`` (a
          chroot): ``/src/a.py`` under ``s3://bucket/ws`` is ``s3://bucket/ws/src/a.py``;
        - a relative path resolves against `cwd` (a URL under the root or a root-relative
          path), else against the root.
        ``.`` and ``..`` are normalized; climbing above the root, or a URL outside it, is
        refused with `FS_SANDBOX_DENIED`.

    Versions and guarantees per storage family:
        - S3 (s3fs): the version is the ETag, which changes with every content change and
          stays put when identical bytes are rewritten (no false stale; S3 has no `touch`).
          Publication is one `PutObject` (atomic: readers see the old or the new object).
          `CreateIfAbsent` sends ``If-None-Match: *`` and every replace or edit sends
          ``If-Match: <etag>``, so guards hold across processes and machines: a lost race
          is `FS_NOT_OBSERVED` / `FS_STALE_VERSION`, never a silent overwrite.
          ``capabilities.cross_process_guards`` is True.
        - memory: the version is a SHA-256 of the bytes (every change caught, identical
          rewrites not stale). Guards hold within one provider instance (per-target lock).
        - everything else: the backend's validator when its info has one (``ETag``, GCS
          ``generation`` — the latter changes on identical rewrites), else size + mtime.
          Size + mtime can miss a same-size rewrite within one mtime tick (one second on
          SFTP); an edit or a guarded replace then compares the content it read against
          the digest this instance recorded when it last read or wrote that version, so
          such a rewrite is still caught when it happened after this instance's read.
          `touch` changes the mtime and reports stale. Guards hold within one provider
          instance only; publication is the backend's `pipe_file` (atomic on memory, not
          crash-atomic on ``file://`` — use `LocalFileSystem` for local disks).

    Args:
        fs: A synchronous-mode fsspec filesystem instance (``asynchronous=False``).
        root: The root URL, e.g. ``"s3://bucket/prefix"`` or ``"memory://workspace"``.

    Raises:
        ValueError: an async-mode fsspec instance, or a root of another protocol.
    """

    def __init__(self, fs: Any, root: str, *, encodings: EncodingRules | None = None) -> None:
        self._store: Store = store_for(fs)
        self._encodings = encodings
        self._fallbacks = FallbackBook()
        self._fs = fs
        self._protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
        scheme, sep, rest = root.partition("://")
        if not sep:
            scheme, rest = self._protocols[0], root
        if scheme not in self._protocols:
            raise ValueError(f"root {root!r} is not a {self._protocols[0]}:// URL")
        self._scheme = scheme
        self._root_parts = normalize(self._fs_parts(f"{scheme}://{rest}"), root)
        # Keep the user's spelling (`memory://ws`, `file:///srv/ws`): it is what they see.
        self._root_lead = "/" if rest.startswith("/") else ""
        self._root_url = self._url(())
        self._locks = TargetLocks()
        self._digests = ContentDigests()
        self._closed = False
        self._excluded: tuple[tuple[str, ...], ...] = ()
        # The contract declares capabilities per class; here they depend on the store.
        self.capabilities = FsCapabilities(
            cross_process_guards=self._store.cross_process_guards,
            directories=self._store.directories,
            content_versions=self._store.content_versions,
        )

    @classmethod
    def from_url(
        cls, url: str, *, encodings: EncodingRules | None = None, **storage_options: Any
    ) -> FsspecFileSystem:
        """Open the storage at `url` (``s3://bucket/prefix``, ``memory://ws``, ``sftp://…``)
        with fsspec's `url_to_fs` and `storage_options` (credentials, ``endpoint_url``, …).

        Raises:
            ValueError, ImportError: from fsspec, for an unknown protocol or a missing
                backend package (e.g. ``pip install dsh-fs[s3]``).
        """
        from fsspec.core import url_to_fs

        fs, _ = url_to_fs(url, **storage_options)
        return cls(fs, url, encodings=encodings)

    @property
    def root(self) -> str:
        """The root URL every path lies under."""
        return self._root_url

    @property
    def roots(self) -> tuple[str, ...]:
        """`root`, the one place paths and path rules are relative to."""
        return (self._root_url,)

    @property
    def fs(self) -> Any:
        """The wrapped fsspec filesystem."""
        return self._fs

    def _fs_parts(self, url: str) -> list[str]:
        return [p for p in str(self._fs._strip_protocol(url)).split("/") if p]

    def _url(self, parts: tuple[str, ...] | list[str]) -> str:
        return f"{self._scheme}://{self._root_lead}" + "/".join([*self._root_parts, *parts])

    def _relative(self, path: str, cwd: str | None) -> list[str]:
        """Components of `path` below the root, `..` applied; refuses climbing out."""
        check_usable_path(path)
        if "://" in path:
            scheme = path.partition("://")[0]
            parts = normalize(self._fs_parts(path), path) if scheme in self._protocols else None
            root = self._root_parts
            if parts is None or parts[: len(root)] != root:
                raise self._outside(path)
            return parts[len(root) :]
        if path.startswith("/"):
            return normalize(path.split("/"), path, self._outside)
        base = self._relative(cwd, None) if cwd else []
        return normalize([*base, *path.split("/")], path, self._outside)

    def _outside(self, path: str) -> FsError:
        return messages.outside_root(path, self._root_url)

    def _path(self, target: FsTarget) -> str:
        """The fsspec path (protocol stripped) of a target this provider minted."""
        return str(self._fs._strip_protocol(str(target.target_key)))

    def _is_root(self, target: FsTarget) -> bool:
        return str(target.target_key) == self._root_url

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        parts = self._relative(path, cwd)
        if self._is_excluded(parts):
            raise self._outside(path)
        url = self._url(parts)
        return FsTarget(target_key=FsTargetKey(url), display_path=url)

    def exclude(self, url: str) -> None:
        """Fence out the prefix `url` under the root (the journal's store when it lies
        inside): nothing below it can be resolved, read, listed, found or changed through
        this provider.

        Raises:
            ValueError: `url` is not under the root.
        """
        parts = normalize(self._fs_parts(url), url)
        if parts[: len(self._root_parts)] != self._root_parts or parts == self._root_parts:
            raise ValueError(f"{url!r} is not below the root {self._root_url}")
        self._excluded = (*self._excluded, tuple(parts[len(self._root_parts) :]))

    def _is_excluded(self, parts: list[str] | tuple[str, ...]) -> bool:
        """Whether the components below the root lie in a fenced-out prefix."""
        return any(tuple(parts[: len(fenced)]) == fenced for fenced in self._excluded)

    def _visible(self, parent: list[str], name: str) -> bool:
        """Whether the child `name` of the directory `parent` (components below the root)
        is outside every fenced-out prefix."""
        return not self._excluded or not self._is_excluded([*parent, *name.split("/")])

    async def process_path(self, target: FsTarget) -> str:
        return str(target.target_key)

    async def file_url(self, target: FsTarget) -> str:
        return str(target.target_key)

    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        outer, inner = str(parent.target_key), str(child.target_key)
        return inner == outer or inner.startswith(outer.rstrip("/") + "/")

    async def _call(
        self,
        verb: messages.Verb,
        display: str,
        func: Callable[..., _T],
        *args: Any,
        on_conflict: Callable[[str], FsError] | None = None,
        on_gone: Callable[[str], FsError] | None = None,
    ) -> _T:
        """Run a blocking backend call in a worker thread; backend errors become `FsError`.
        After `aclose`, nothing is called: `FS_ABORTED`."""
        if self._closed:
            raise messages.aborted(verb, display)
        with (
            FramesDropped(),
            map_backend_errors(verb, display, on_conflict=on_conflict, on_gone=on_gone),
        ):
            return await to_thread.run_sync(partial(func, *args))

    async def stat(self, target: FsTarget) -> FsInfo | None:
        entry = await self._call("read", target.display_path, self._store.stat, self._path(target))
        if entry is None:
            if self._is_root(target):
                # An object-store root is a prefix that may hold nothing yet: still a folder.
                return FsInfo(version=DIRECTORY_VERSION, type=FsFileType.DIRECTORY, size=0)
            return None
        return FsInfo(
            version=entry.version, type=entry.type, size=entry.size, mtime_ns=entry.mtime_ns
        )

    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        # fsspec stores expose no symbolic links of their own: lstat is stat.
        target = await self.resolve(path, cwd)
        info = await self.stat(target)
        if info is None:
            return None
        return FsPathInfo(display_path=target.display_path, type=info.type, size=info.size)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        try:
            children = await self._call(
                "list", target.display_path, self._store.list_dir, self._path(target)
            )
        except FsError as exc:
            if exc.code is FsErrorCode.NOT_FOUND and self._is_root(target):
                return []
            raise
        if not self._excluded:
            return children
        parent = self._below_root(target)
        return [child for child in children if self._visible(parent, child.name)]

    def _below_root(self, target: FsTarget) -> list[str]:
        """The components of a target this provider minted, below the root."""
        return self._fs_parts(str(target.target_key))[len(self._root_parts) :]

    async def _read(self, target: FsTarget, verb: messages.Verb, limit: int | None) -> Blob:
        display = target.display_path
        blob = await self._call(verb, display, self._store.read, self._path(target), limit)
        if blob is None:
            raise messages.not_found(verb, display)
        return blob

    async def read_text(self, target: FsTarget) -> str:
        return (await self.read_decoded(target)).text

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        display = target.display_path
        return await self._call("read", display, self._read_text_sync, target)

    def _read_text_sync(self, target: FsTarget) -> FsDecoded:
        # Decoding a large file runs here, in the worker thread, not on the event loop.
        blob = self._store.read(self._path(target), None)
        if blob is None:
            raise messages.not_found("read", target.display_path)
        assert blob.data is not None
        text, encoding = self._decode(target, blob.data, "read")
        self._digests.record(target, blob.version, blob.data)
        return FsDecoded(text=text, encoding=encoding)

    @property
    def encodings(self) -> EncodingRules | None:
        """The declared encodings this provider reads and writes by (SPEC §12)."""
        return self._encodings

    def _rule(self, target: FsTarget) -> str | None:
        if self._encodings is None:
            return None
        return self._encodings.codec_for((target.display_path, str(target.target_key)))

    def _declared(self, target: FsTarget) -> Declared:
        fallback = self._encodings.fallback if self._encodings is not None else ()
        return Declared(self._rule(target), fallback)

    def _decode(self, target: FsTarget, data: bytes, verb: messages.Verb) -> tuple[str, FsEncoding]:
        """`data` of `target` as text (SPEC §12: BOM, rule, UTF-8, fallbacks)."""
        declared = self._declared(target)
        return decode_file(data, declared.rule, declared.fallback, verb, target.display_path)

    def _new_encoding(self, target: FsTarget) -> FsEncoding:
        """The encoding of a new file at `target`: its rule's, else plain UTF-8."""
        rule = self._rule(target)
        if rule is None or rule == "utf-8":
            return UTF8
        return FsEncoding(bom=True) if rule == "utf-8-sig" else FsEncoding(codec=rule)

    def _prior_encoding(self, target: FsTarget, prior: Blob) -> FsEncoding:
        """The encoding of the file a write replaces (which the write keeps): its BOM's,
        else its rule's, else UTF-8 unless fallbacks prove another codec."""
        head = prior.data[:3] if prior.data is not None else self._cat_head(self._path(target), 3)
        bom = bom_encoding(head)
        if bom is not None:
            return bom
        declared = self._declared(target)
        if declared.rule is not None:
            return FsEncoding(codec=declared.rule)
        if not declared.fallback:
            return self._new_encoding(target)
        data = prior.data
        if data is None:
            whole = self._store.read(self._path(target), None)
            data = whole.data if whole is not None else None
        try:
            _, encoding = decode_file(data or b"", None, declared.fallback, "write", "")
        except FsError:
            return UTF8
        return encoding

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        blob = await self._read(target, "read", max_bytes)
        if blob.data is None or len(blob.data) > max_bytes:
            raise messages.too_large("read", target.display_path, max_bytes)
        return blob.data

    async def read_many(self, targets: Sequence[FsTarget], max_bytes: int) -> list[bytes | FsError]:
        """Each file as `read_bytes` reads it; on S3 their GETs in flight together (at most
        `READS_IN_FLIGHT` per store), on other stores one after another in one worker
        thread. An object over `max_bytes` is never read past its headers."""
        if not targets:
            return []
        if self._closed:
            raise messages.aborted("read", targets[0].display_path)
        paths = [self._path(target) for target in targets]
        job = self._store.concurrent_reads(paths, max_bytes)
        if job is None:
            outcomes = await self._call(
                "read", targets[0].display_path, self._store.read_many, paths, max_bytes
            )
        else:
            outcomes = await _on_loop(*job)
        answers: list[bytes | FsError] = []
        for target, outcome in zip(targets, outcomes, strict=True):
            display = target.display_path
            if isinstance(outcome, FsError):
                answers.append(outcome)
            elif isinstance(outcome, Exception):
                if not isinstance(outcome, backend_error_types()):
                    raise outcome  # not the storage's answer: as `read_bytes` lets it out
                answers.append(backend_error(outcome, "read", display))
            elif outcome is None:
                answers.append(messages.not_found("read", display))
            elif outcome.data is None or len(outcome.data) > max_bytes:
                answers.append(messages.too_large("read", display, max_bytes))
            else:
                answers.append(outcome.data)
        return answers

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        if size == 0:
            return b""
        display = target.display_path
        data = await self._call("read", display, self._cat_head, self._path(target), size)
        return data[:size]

    def _cat_head(self, path: str, size: int) -> bytes:
        # Keywords: backends differ in what comes before `start` (s3fs: `version_id`).
        return bytes(self._fs.cat_file(path, start=0, end=size))

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        return self._stream_text(target)

    @asynccontextmanager
    async def _stream_text(self, target: FsTarget) -> AsyncIterator[AsyncIterator[str]]:
        display = target.display_path
        stream = await self._call(
            "read", display, self._store.open, self._path(target), STREAM_CHUNK_SIZE
        )
        chunks = TextChunks(
            self._call, stream, display, STREAM_CHUNK_SIZE, declared=self._declared(target)
        )
        try:
            yield chunks
        finally:
            with anyio.CancelScope(shield=True):
                await chunks.aclose()

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        display = target.display_path
        on_conflict: Callable[[str], FsError] | None = None
        on_gone: Callable[[str], FsError] | None = None
        if isinstance(expected, CreateIfAbsent):
            on_conflict = messages.overwrite_unobserved
        elif isinstance(expected, ReplaceIfVersion):
            on_conflict, on_gone = messages.write_stale, messages.write_gone
        elif capture is not None:
            # A journaled write publishes only over what its pre-image kept.
            on_conflict, on_gone = messages.write_stale, messages.write_gone
        async with self._locks.hold(str(target.target_key)):
            operation, version, before, after = await self._call(
                "write",
                display,
                self._write_locked,
                target,
                content,
                expected,
                capture,
                on_conflict=on_conflict,
                on_gone=on_gone,
            )
        return FsWriteOutcome(operation=operation, version=version, before=before, after=after)

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        async with self._locks.hold(str(target.target_key)):
            return await self._call(
                "edit",
                target.display_path,
                self._edit_locked,
                target,
                edit,
                expected,
                capture,
                on_conflict=messages.edit_stale,
                on_gone=messages.edit_gone,
            )

    def _write_locked(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None,
        capture: FsCapture | None,
    ) -> tuple[Literal["create", "update"], FsVersion, str | None, str]:
        display = target.display_path
        written: list[tuple[str, FsEncoding]] = []

        def encode(prior: Blob | None) -> bytes:
            # SPEC §12: a file keeps its codec and BOM; a new one gets its rule's.
            encoding = (
                self._new_encoding(target) if prior is None else self._prior_encoding(target, prior)
            )
            text = content
            if encoding.bom and not text.startswith("\ufeff"):
                text = "\ufeff" + text
            data = encode_as(text, encoding, "write", display, "content")
            written.append((text, encoding))
            return data

        operation, version, prior = self._write_data(
            target, encode, expected, capture, encoding=lambda: written[0][1]
        )
        text, encoding = written[0]
        before = None
        if prior is not None and prior.data is not None:
            before = (
                decode_or_none(prior.data)
                if encoding.utf8
                else round_trip(prior.data, encoding.codec)
            )
        return operation, version, before, text

    def _write_data(
        self,
        target: FsTarget,
        content: bytes | Callable[[Blob | None], bytes],
        expected: WriteGuard | None,
        capture: FsCapture | None,
        verb: messages.Verb = "write",
        encoding: Callable[[], FsEncoding] | None = None,
    ) -> tuple[Literal["create", "update"], FsVersion, Blob | None]:
        """Publish `content` at `target` under `expected`; a journaled write hands the
        replaced object to `capture` first and then publishes only over exactly that object
        (``If-Match`` / ``If-None-Match: *`` on S3). Returns what was replaced. `content`
        may be made from the replaced object (None: a create): a write's text in its
        encoding, which `encoding` tells once `content` made it (bytes as they are: the
        encoding their path declares)."""
        display, path = target.display_path, self._path(target)
        # The journal keeps the replaced bytes: a store that copies them needs them at hand.
        limit = (
            None if capture is not None and not self._store.cross_process_guards else BEFORE_LIMIT
        )
        prior = self._store.read(path, limit)
        data = content(prior) if callable(content) else content
        codec = None
        if capture is not None:  # SPEC §12: the journal decodes the change in this codec
            codec = journal_codec(encoding() if encoding else self._new_encoding(target))
        if prior is None:
            if isinstance(expected, ReplaceIfVersion):
                raise messages.write_gone(display)
            ticket = self._prepare(capture, target, verb, None, codec)
            try:
                # Only a guarded (or journaled) create must never replace; an unguarded may.
                version = self._store.put(
                    path,
                    data,
                    if_absent=isinstance(expected, CreateIfAbsent) or capture is not None,
                )
            except BaseException:
                self._abandon(capture, ticket)
                raise
            self._digests.record(target, version, data)
            self._commit(capture, ticket, version, data)
            return "create", version, None
        if isinstance(expected, CreateIfAbsent):
            raise messages.overwrite_unobserved(display)
        guarded = isinstance(expected, ReplaceIfVersion) or capture is not None
        if isinstance(expected, ReplaceIfVersion) and not self._is_current(
            target, expected.version, prior
        ):
            raise messages.write_stale(display)
        ticket = self._prepare(capture, target, verb, prior, codec)
        try:
            version = self._store.put(path, data, if_match=prior.version if guarded else None)
        except BaseException:
            self._abandon(capture, ticket)
            raise
        self._digests.record(target, version, data)
        self._commit(capture, ticket, version, data)
        return "update", version, prior

    def _prior_limit(self, capture: FsCapture | None) -> int | None:
        """How much of the replaced file to read: all of it for a journal that copies the
        bytes (S3 copies server-side)."""
        if capture is not None and not self._store.cross_process_guards:
            return None
        return BEFORE_LIMIT

    def _prepare(
        self,
        capture: FsCapture | None,
        target: FsTarget,
        verb: messages.Verb,
        prior: Blob | None,
        codec: str | None = None,
    ) -> object:
        """The journal's `prepare` for replacing `prior` (None: a create) with text in
        `codec` (None: UTF-8; SPEC §12), in the critical section right before publication;
        None when nothing journals."""
        if capture is None:
            return None
        pre_image: FsPreImage | None = None
        if prior is not None:
            pre_image = FsspecReplaced(
                path=self._path(target), version=prior.version, data=prior.data
            )
        start = FsChangeStart(
            target=target,
            verb=verb,
            before=prior.version if prior is not None else None,
            pre_image=pre_image,
            size=prior.size if prior is not None else None,
            codec=codec,
        )
        return capture.prepare(start)

    @staticmethod
    def _commit(
        capture: FsCapture | None, ticket: object, version: FsVersion | None, data: bytes | None
    ) -> None:
        if capture is not None:
            capture.commit(ticket, version, data)

    @staticmethod
    def _abandon(capture: FsCapture | None, ticket: object) -> None:
        if capture is not None:
            capture.abandon(ticket)

    def _edit_locked(
        self, target: FsTarget, edit: FsEdit, expected: FsVersion | None, capture: FsCapture | None
    ) -> FsEditOutcome:
        display, path = target.display_path, self._path(target)
        prior = self._store.read(path, None)
        if prior is None:
            raise messages.edit_gone(display)
        # The version check comes before matching: a stale edit is stale, never a match error.
        if expected is not None and not self._is_current(target, expected, prior):
            raise messages.edit_stale(display)
        assert prior.data is not None
        before, encoding = self._decode(target, prior.data, "edit")
        after, count = apply_change(before, edit, display)
        if encoding.utf8:
            data = encode_text(after, "edit", display)
        else:
            # SPEC §12: only the changed span's bytes are encoded; the rest are the file's.
            data = splice(prior.data, encoding, before, after, "edit", display, "new_string")
        # Even an unguarded edit is a read-modify-write: publish only over what was read.
        ticket = self._prepare(capture, target, "edit", prior, journal_codec(encoding))
        try:
            version = self._store.put(path, data, if_match=prior.version)
        except BaseException:
            self._abandon(capture, ticket)
            raise
        self._digests.record(target, version, data)
        self._commit(capture, ticket, version, data)
        return FsEditOutcome(version=version, before=before, after=after, replacements=count)

    def _is_current(self, target: FsTarget, expected: FsVersion, prior: Blob) -> bool:
        """The compare of the compare-and-swap: same version token, and for size + mtime
        versions, no other content than this instance last saw at that version."""
        if prior.version != expected:
            return False
        if is_content_version(expected) or prior.data is None:
            return True
        return self._digests.matches(target, expected, prior.data)

    async def aclose(self) -> None:
        """Refuse every later call with `FS_ABORTED` (the fsspec instance stays the caller's)."""
        self._closed = True

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        """A ranged read from byte `start`; on S3 and memory, with the version every read
        is pinned to (S3 reads carry ``If-Match``; memory reads a snapshot)."""
        return stream_text_from(
            self._call,
            self._store,
            self._path(target),
            target.display_path,
            start,
            STREAM_CHUNK_SIZE,
            self._declared(target),
            partial(self._cat_head, self._path(target), 3),
            self._fallbacks,
        )

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        """One recursive listing of the prefix (`Store.find`: on S3 one request per thousand
        keys), arranged into per-directory batches; the root is looked at only when the
        listing is empty."""
        return self._walk(root, descend)

    @asynccontextmanager
    async def _walk(
        self, root: FsTarget, descend: Callable[[str], bool] | None
    ) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
        display = root.display_path
        try:
            entries = await self._call("search", display, self._store.find, self._path(root))
        except FsError as error:
            if error.code is not FsErrorCode.NOT_FOUND:
                raise
            entries = []
        if not entries:
            # Nothing listed: an empty directory, a file, or nothing at all. Only then is
            # the root looked at (a listing with entries proves a directory: one request
            # saved per glob and grep, which the tools have already checked).
            info = await self._call("search", display, self._store.stat, self._path(root))
            if info is None and not self._is_root(root):
                raise messages.not_found("search", display)
            if info is not None and info.type is not FsFileType.DIRECTORY:
                raise messages.not_a_directory("search", display)
        if self._excluded:
            parent = self._below_root(root)
            entries = [entry for entry in entries if self._visible(parent, entry.path)]
        batches = batches_by_directory(entries, descend)
        try:
            yield batches
        finally:
            await batches.aclose()

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        """Remove the file inside the per-target critical section, checked against
        `expected`. On S3 the removal is a `DeleteObject` conditional on the ETag that was
        checked where the store honours it (see `S3Store.delete`); elsewhere it holds
        within this provider instance."""
        gone = messages.delete_gone if expected is not None else _not_found_delete
        async with self._locks.hold(str(target.target_key)):
            return await self._call(
                "delete",
                target.display_path,
                self._delete_locked,
                target,
                expected,
                capture,
                on_conflict=messages.delete_stale,
                on_gone=gone,
            )

    def _delete_locked(
        self, target: FsTarget, expected: FsVersion | None, capture: FsCapture | None
    ) -> FsDeleteOutcome:
        display, path = target.display_path, self._path(target)
        limit = (
            None if capture is not None and not self._store.cross_process_guards else BEFORE_LIMIT
        )
        prior = self._store.read(path, limit)
        if prior is None:
            if expected is not None:
                raise messages.delete_gone(display)
            raise messages.not_found("delete", display)
        if expected is not None and not self._is_current(target, expected, prior):
            raise messages.delete_stale(display)
        ticket = self._prepare(capture, target, "delete", prior)
        try:
            self._store.delete(path, if_match=prior.version)
        except BaseException:
            self._abandon(capture, ticket)
            raise
        self._commit(capture, ticket, None, None)
        return FsDeleteOutcome(version=prior.version)

    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        """`FileSystem.restore` from a pre-image this provider's journal store kept, in the
        per-target critical section: the kept bytes are read back and published with the
        write's guards (S3: ``PutObject`` with ``If-Match: <expected>``, or
        ``If-None-Match: *`` to recreate a deleted file), an undone create is a delete with
        ``If-Match``. Object stores have no permission bits: `mode` is not used."""
        del mode
        display = target.display_path
        if pre_image is None:
            if expected is None:
                raise messages.write_stale(display)
            gone, stale = messages.delete_gone, messages.delete_stale
        elif expected is None:
            gone, stale = messages.write_gone, messages.write_stale
        else:
            gone, stale = messages.write_gone, messages.write_stale
        async with self._locks.hold(str(target.target_key)):
            return await self._call(
                "write",
                display,
                self._restore_locked,
                target,
                pre_image,
                expected,
                capture,
                on_conflict=stale,
                on_gone=gone,
            )

    def _restore_locked(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        capture: FsCapture | None,
    ) -> FsVersion | None:
        if pre_image is None:
            assert expected is not None
            self._delete_locked(target, expected, capture)
            return None
        if not isinstance(pre_image, FsspecKept):
            raise messages.restore_unsupported(target.display_path)
        kept = self._store.read(pre_image.path, None)
        if kept is None or kept.data is None:
            raise messages.journal_failed(
                "write", target.display_path, pre_image.path, "its pre-image is gone"
            )
        if expected is None:
            _, version, _ = self._write_data(target, kept.data, CreateIfAbsent(), capture)
            return version
        _, version, _ = self._write_data(target, kept.data, ReplaceIfVersion(expected), capture)
        return version

    def journal_store(self, location: str | None = None) -> FsspecJournalStore:
        """The change journal's store for this root, on the same storage (SPEC §9): at the
        URL `location` (one sub-store per root inside), else at a hidden sibling of the
        root (``s3://bucket/.dsh-fs-journal`` for ``s3://bucket/ws``), else, for a root at
        the top of its storage (a bucket), at ``<root>/.dsh-fs-journal``, fenced out.

        Raises:
            ValueError: `location` is not a URL of this storage, or lies inside the root.
        """
        if location is None:
            parent = self._root_parts[:-1]
            # No sibling: the storage's top (an S3 bucket's, or a root that is ``/``).
            inside = not self._root_parts or (not parent and not self._store.directories)
            parts = [*(self._root_parts if inside else parent), DEFAULT_DIRECTORY]
        else:
            scheme, sep, _ = location.partition("://")
            if not sep or scheme not in self._protocols:
                raise ValueError(
                    f"the journal store {location!r} of {self._root_url} must be a "
                    f"{self._scheme}:// URL on the same storage"
                )
            parts = normalize(self._fs_parts(location), location)
            root = self._root_parts
            inside = parts[: len(root)] == root
            if inside:
                raise ValueError(
                    f"the journal store {location!r} is inside a served root; "
                    "choose a prefix outside it"
                )
        url = f"{self._scheme}://{self._root_lead}" + "/".join(parts)
        if inside:
            self.exclude(url)
        path = "/".join(parts)
        if self._root_lead:
            path = "/" + path
        store = FsspecJournalStore(
            self._store, url, str(self._fs._strip_protocol(url)), self._root_url
        )
        return store

    def set_records(self, journal: JournalStore | None = None) -> FsspecSetRecords:
        """Where this root's change sets keep their intent records (SPEC §13), on the same
        storage: beside `journal`'s sub-store (``<sub-store>/sets``, fenced out with it)
        when journaling, else a hidden sibling of the root (``s3://bucket/.dsh-fs-sets/<id>``
        for ``s3://bucket/ws``; inside the root, fenced out, at a storage's top)."""
        if isinstance(journal, FsspecJournalStore):
            location = journal.location + "/sets"
        else:
            parent = self._root_parts[:-1]
            inside = not self._root_parts or (not parent and not self._store.directories)
            parts = [*(self._root_parts if inside else parent), SETS_DIRECTORY]
            digest = hashlib.sha256(self._root_url.encode()).hexdigest()[:32]
            location = f"{self._scheme}://{self._root_lead}" + "/".join([*parts, digest])
            if inside:
                self.exclude(location)
        return FsspecSetRecords(self._store, location, str(self._fs._strip_protocol(location)))

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        """A file: a copy (S3: a server-side ``CopyObject`` conditioned on the source's ETag
        and, on the destination, ``If-None-Match: *`` or ``If-Match``), verified, then a
        guarded delete of the source (``DeleteObject`` with ``If-Match``). A directory (on
        stores that have them): fsspec's recursive move once the destination is checked
        absent. Key prefixes (S3 "directories") are not moved."""
        src, dst = source.display_path, destination.display_path
        if source.target_key == destination.target_key:
            raise messages.move_onto_itself(src, dst)
        if self._is_root(source):
            raise messages.is_root("move", src)
        if await self.contains(source, destination):
            raise messages.move_into_itself(src, dst)
        first, second = sorted((str(source.target_key), str(destination.target_key)))
        async with self._locks.hold(first), self._locks.hold(second):
            return await self._call(
                "move",
                src,
                self._move_locked,
                source,
                destination,
                expected,
                replace,
                capture,
                on_conflict=lambda _: messages.move_exists(src, dst),
                on_gone=messages.move_gone if expected is not None else _not_found_move,
            )

    def _move_locked(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None,
        replace: WriteGuard | None,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        src, dst = source.display_path, destination.display_path
        sp, dp = self._path(source), self._path(destination)
        entry = self._store.stat(sp)
        if entry is None:
            raise messages.move_gone(src) if expected is not None else _not_found_move(src)
        there = self._store.stat(dp)
        if entry.type is FsFileType.DIRECTORY:
            if not self._store.directories:
                raise messages.move_unsupported(src, "key prefixes")
            if expected is not None:
                raise messages.move_stale(src)
            if there is not None:
                raise messages.move_exists(src, dst)
            self._store.make_parents(dp)
            self._store.fs.mv(sp, dp, recursive=True)
            return FsMoveOutcome(type=FsFileType.DIRECTORY, version=None)
        if entry.type is not FsFileType.FILE:
            raise messages.not_regular_file("move", src)
        prior = self._store.read(sp, None)
        if prior is None or prior.data is None:
            raise messages.move_gone(src) if expected is not None else _not_found_move(src)
        if expected is not None and not self._is_current(source, expected, prior):
            raise messages.move_stale(src)
        seen = None
        if there is not None:
            if not isinstance(replace, ReplaceIfVersion) or there.type is not FsFileType.FILE:
                raise messages.move_exists(src, dst)
            seen = self._store.read(dp, self._prior_limit(capture))
            if seen is None or not self._is_current(destination, replace.version, seen):
                raise messages.move_destination_stale(src, dst)
        ticket = None
        if capture is not None:
            pre_image = None
            if seen is not None:
                pre_image = FsspecReplaced(path=dp, version=seen.version, data=seen.data)
            start = FsChangeStart(
                target=destination,
                verb="move",
                before=seen.version if seen is not None else None,
                pre_image=pre_image,
                size=seen.size if seen is not None else None,
                source=source,
                source_version=prior.version,
            )
            ticket = capture.prepare(start)
        try:
            version = self._store.copy(
                sp,
                dp,
                prior.data,
                source_version=prior.version,
                if_absent=there is None,
                if_match=seen.version if seen is not None else None,
            )
        except BaseException:
            self._abandon(capture, ticket)
            raise
        # Published: the entry is committed whatever the checks below find.
        self._commit(capture, ticket, version, None)
        copied = self._store.read(dp, None)
        if copied is None or copied.data != prior.data:
            raise messages.move_left_both(src, dst, "the copy does not match the source")
        try:
            self._store.delete(sp, if_match=prior.version)
        except Exception as exc:
            reason = backend_error(exc, "delete", src).message.partition(": ")[2]
            raise messages.move_left_both(src, dst, reason or type(exc).__name__) from exc
        self._digests.record(destination, version, prior.data)
        return FsMoveOutcome(type=FsFileType.FILE, version=version, replaced=there is not None)

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        """``makedirs`` on stores with directories, once no ancestor is a file; object
        stores (key prefixes only) refuse, as the contract's default does."""
        if not self._store.directories:
            return await super().mkdir(target)
        async with self._locks.hold(str(target.target_key)):
            return await self._call("mkdir", target.display_path, self._mkdir_sync, target, capture)

    def _mkdir_sync(self, target: FsTarget, capture: FsCapture | None = None) -> FsMkdirOutcome:
        display, path = target.display_path, self._path(target)
        try:
            entry = self._store.stat(path)
            if entry is None:
                self._store.make_parents(path)
        except NotADirectoryError:
            raise messages.mkdir_blocked(display) from None
        if entry is not None:
            if entry.type is not FsFileType.DIRECTORY:
                raise messages.mkdir_blocked(display)
            return FsMkdirOutcome(created=False)
        ticket = None
        if capture is not None:
            start = FsChangeStart(
                target=target,
                verb="mkdir",
                before=None,
                pre_image=None,
                kind=ChangeKind.DIRECTORY,
            )
            ticket = capture.prepare(start)
        try:
            self._store.fs.makedirs(path, exist_ok=True)
        except BaseException:
            self._abandon(capture, ticket)
            raise
        self._commit(capture, ticket, DIRECTORY_VERSION, None)
        return FsMkdirOutcome(created=True)

    async def delete_dir(self, target: FsTarget) -> None:
        """``rmdir`` of an empty directory on stores with directories; object stores refuse."""
        if not self._store.directories:
            return await super().delete_dir(target)
        if self._is_root(target):
            raise messages.is_root("delete", target.display_path)
        async with self._locks.hold(str(target.target_key)):
            await self._call("delete", target.display_path, self._delete_dir_sync, target)

    def _delete_dir_sync(self, target: FsTarget) -> None:
        display, path = target.display_path, self._path(target)
        entry = self._store.stat(path)
        if entry is None:
            raise messages.not_found("delete", display)
        if entry.type is not FsFileType.DIRECTORY:
            raise messages.not_a_directory("delete", display)
        if self._store.list_dir(path):
            raise messages.not_empty(display)
        self._store.fs.rmdir(path)


async def _on_loop(loop: asyncio.AbstractEventLoop, job: Coroutine[Any, Any, _T]) -> _T:
    """Await `job` on the backend's own event loop (s3fs runs one in a thread of its own).

    On asyncio the caller's task waits for it directly, and a cancelled caller cancels the
    job there (its requests stop); under another backend (trio) a worker thread waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        from fsspec.asyn import sync

        return await to_thread.run_sync(partial(sync, loop, lambda: job))
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(job, loop))


def _not_found_move(display: str) -> FsError:
    return messages.not_found("move", display)


def _not_found_delete(display: str) -> FsError:
    return messages.not_found("delete", display)
