"""The S3 family of `FsspecFileSystem`: ETag versions, conditional `PutObject` publication and
conditional `DeleteObject` removal."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Coroutine
from typing import IO, Any, Final

from dsh_fs.fs import FsVersion

from ._store import Blob, Store, etag_version

__all__ = ["READS_IN_FLIGHT", "READ_ALL_CONCURRENCY", "S3Store"]

READ_ALL_CONCURRENCY: Final = 64
"""How many ``GetObject`` requests `S3Store.read_all` keeps in flight (a journal's records,
read in one batch)."""

READS_IN_FLIGHT: Final = 16
"""GETs one store has in flight at most for `S3Store.concurrent_reads` (all its callers
together): a search's reads overlap their round trips without flooding the service."""


class S3Store(Store):
    """S3 through s3fs: ETag versions and conditional `PutObject` publication.

    The ETag of a single-part upload is the MD5 of its bytes, so rewriting identical bytes
    keeps the version; for multipart or SSE-KMS objects it is still unique per content
    upload. A VersionId (versioned buckets) is deliberately not part of the version: it
    changes on identical rewrites, and ``If-Match`` compares ETags, so the version a guard
    checks is exactly the one the server enforces.
    """

    cross_process_guards = True
    directories = False

    def __init__(self, fs: Any) -> None:
        super().__init__(fs)
        self._in_flight: asyncio.Semaphore | None = None
        self._in_flight_loop: asyncio.AbstractEventLoop | None = None

    def concurrent_reads(
        self, paths: list[str], limit: int
    ) -> tuple[asyncio.AbstractEventLoop, Coroutine[Any, Any, list[Blob | Exception | None]]]:
        """`read` of each path, its GET one of `READS_IN_FLIGHT` at most in flight at once,
        on s3fs's loop."""
        return self.fs.loop, self._get_many(paths, limit)

    async def _get_many(self, paths: list[str], limit: int) -> list[Blob | Exception | None]:
        loop = asyncio.get_running_loop()
        if self._in_flight is None or self._in_flight_loop is not loop:
            # Made on s3fs's loop, the only one that awaits it (a new one after a fork).
            self._in_flight, self._in_flight_loop = asyncio.Semaphore(READS_IN_FLIGHT), loop
        in_flight = self._in_flight

        async def one(path: str) -> Blob | Exception | None:
            async with in_flight:
                try:
                    bucket, key, _ = self.fs.split_path(path)
                    blob = await self._get(bucket, key, limit)
                    if blob is None and await self._has_children(bucket, key):
                        # As `read`: a prefix is no file (asked only of a missing object).
                        raise IsADirectoryError(errno.EISDIR, "a key prefix, not an object", path)
                    return blob
                except Exception as exc:  # the caller maps it, or raises what it cannot map
                    return exc

        return list(await asyncio.gather(*(one(path) for path in paths)))

    def _info(self, path: str) -> dict[str, Any]:
        info: dict[str, Any] = self.fs.info(path, refresh=True)
        return info

    def _ls(self, path: str) -> list[dict[str, Any]]:
        try:
            entries: list[dict[str, Any]] = self.fs.ls(path, detail=True, refresh=True)
        finally:
            # A cached listing would serve stale sizes and ETags to later calls.
            self.fs.invalidate_cache(path)
        return [e for e in entries if e["name"].rstrip("/") != path.rstrip("/")]

    def _find(self, path: str) -> dict[str, dict[str, Any]]:
        try:
            found: dict[str, dict[str, Any]] = self.fs.find(path, withdirs=True, detail=True)
        finally:
            self.fs.invalidate_cache(path)
        return found

    def _version(self, path: str, info: dict[str, Any]) -> FsVersion:
        del path
        return etag_version(info["ETag"])

    def read(self, path: str, limit: int | None) -> Blob | None:
        bucket, key, _ = self.fs.split_path(path)
        blob: Blob | None = self._sync(self._get, bucket, key, limit)
        if blob is None and self._is_prefix(bucket, key):
            raise IsADirectoryError(errno.EISDIR, "a key prefix, not an object", path)
        return blob

    def read_all(self, paths: list[str]) -> dict[str, bytes]:
        """One ``GetObject`` per object, `READ_ALL_CONCURRENCY` at a time. s3fs's `cat` asks
        each object's size first (a ``HeadObject``, to split a large one into ranged GETs):
        reading a journal's records (each small, `RECORD_LIMIT`) would take twice the
        requests."""
        if not paths:
            return {}
        blobs: list[Blob | BaseException | None] = self._sync(self._get_all, paths)
        return {
            str(self.fs._strip_protocol(path)): blob.data
            for path, blob in zip(paths, blobs, strict=True)
            if isinstance(blob, Blob) and blob.data is not None
        }

    async def _get_all(self, paths: list[str]) -> list[Blob | BaseException | None]:
        gate = asyncio.Semaphore(READ_ALL_CONCURRENCY)

        async def get(path: str) -> Blob | None:
            bucket, key, _ = self.fs.split_path(path)
            async with gate:
                return await self._get(bucket, key, None)

        return list(await asyncio.gather(*(get(p) for p in paths), return_exceptions=True))

    def put(
        self, path: str, data: bytes, *, if_absent: bool = False, if_match: FsVersion | None = None
    ) -> FsVersion:
        bucket, key, _ = self.fs.split_path(path)
        conditions: dict[str, str] = {}
        if if_absent:
            conditions["IfNoneMatch"] = "*"
        if if_match is not None:
            conditions["IfMatch"] = if_match.removeprefix("etag:")
        out = self._sync(
            self._client_call, "put_object", Bucket=bucket, Key=key, Body=data, **conditions
        )
        self.fs.invalidate_cache(path)
        return etag_version(out["ETag"])

    def delete(self, path: str, *, if_match: FsVersion) -> None:
        """``DeleteObject`` with ``If-Match: <etag>``: the service itself refuses to remove
        another version (412, the caller's stale error) or a missing object (404). Stores
        that ignore the condition on deletes (older S3-compatible servers) remove the object
        unconditionally; the caller's critical section still holds within this instance."""
        bucket, key, _ = self.fs.split_path(path)
        try:
            self._sync(
                self._client_call,
                "delete_object",
                Bucket=bucket,
                Key=key,
                IfMatch=if_match.removeprefix("etag:"),
            )
        finally:
            self.fs.invalidate_cache(path)

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
        """A server-side ``CopyObject`` (no bytes through this process), conditioned on the
        source's ETag (``CopySourceIfMatch``) and on the destination: ``If-None-Match: *``
        for a create, ``If-Match: <etag>`` for a replacement. A service that ignores a
        condition (moto 5.2 ignores all three on ``CopyObject``) leaves the caller's
        critical section and its verification of the copy as the guard."""
        del data
        bucket, key, _ = self.fs.split_path(destination)
        source_bucket, source_key, _ = self.fs.split_path(source)
        conditions: dict[str, str] = {"CopySourceIfMatch": source_version.removeprefix("etag:")}
        if if_absent:
            conditions["IfNoneMatch"] = "*"
        if if_match is not None:
            conditions["IfMatch"] = if_match.removeprefix("etag:")
        try:
            out = self._sync(
                self._client_call,
                "copy_object",
                Bucket=bucket,
                Key=key,
                CopySource={"Bucket": source_bucket, "Key": source_key},
                **conditions,
            )
        finally:
            self.fs.invalidate_cache(destination)
        return etag_version(out["CopyObjectResult"]["ETag"])

    def keep(self, source: str, destination: str, version: FsVersion, data: bytes | None) -> None:
        """A server-side ``CopyObject`` into the store (no bytes through this process),
        conditioned on the source's ETag (``CopySourceIfMatch``) and on nothing being at
        `destination` (``If-None-Match: *``). moto 5.2 ignores both conditions on
        ``CopyObject``, so the copy's ETag is checked too: for a single-part object it is
        the MD5 of the bytes, equal to the source's only when the same bytes were copied (a
        multipart source's ETag differs from its copy's: there the service's condition is
        the guard)."""
        copied = self.copy(
            source, destination, data or b"", source_version=version, if_absent=True, if_match=None
        )
        if copied != version and "-" not in version:
            self.discard(destination)
            raise OSError(errno.EAGAIN, "the file was replaced while it was kept", source)

    def discard(self, path: str) -> None:
        bucket, key, _ = self.fs.split_path(path)
        try:
            self._sync(self._client_call, "delete_object", Bucket=bucket, Key=key)
        finally:
            self.fs.invalidate_cache(path)

    def open(self, path: str, block_size: int) -> IO[bytes]:
        self.fs.invalidate_cache(path)
        return super().open(path, block_size)

    def _check_parents(self, path: str) -> None:
        del path  # keys have no parents

    def _sync(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        from fsspec.asyn import sync

        return sync(self.fs.loop, func, *args, **kwargs)

    async def _client_call(self, method: str, **kwargs: Any) -> Any:
        # The raw aiobotocore client keeps botocore's `ClientError` (code, condition) intact;
        # s3fs's own wrappers fold PreconditionFailed into a generic EINVAL.
        client = await self.fs.set_session()
        return await getattr(client, method)(**kwargs, **self.fs.req_kw)

    async def _get(self, bucket: str, key: str, limit: int | None) -> Blob | None:
        from botocore.exceptions import ClientError

        try:
            out = await self._client_call("get_object", Bucket=bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        version = etag_version(out["ETag"])
        size = int(out["ContentLength"])
        async with out["Body"] as body:
            if limit is not None and size > limit:
                return Blob(data=None, size=size, version=version)
            data: bytes = await body.read()
        return Blob(data=data, size=len(data), version=version)

    def _is_prefix(self, bucket: str, key: str) -> bool:
        return bool(self._sync(self._has_children, bucket, key))

    async def _has_children(self, bucket: str, key: str) -> bool:
        out = await self._client_call(
            "list_objects_v2",
            Bucket=bucket,
            Prefix=key.rstrip("/") + "/" if key else "",
            MaxKeys=1,
        )
        return bool(out.get("KeyCount") or out.get("Contents"))

    content_versions = True

    def open_from(
        self, path: str, block_size: int, start: int
    ) -> tuple[IO[bytes], FsVersion | None]:
        """s3fs pins every ranged GET of an open file to the ETag it opened with
        (``If-Match``; a replaced object fails the read), so that ETag is the version of
        every byte read."""
        stream, _ = super().open_from(path, block_size, start)
        details: dict[str, Any] = getattr(stream, "details", {})
        read_kw: dict[str, Any] = getattr(stream, "read_kw", {})
        etag = details.get("ETag")
        if not isinstance(etag, str):
            return stream, None
        pinned = read_kw.get("IfMatch") == etag or bool(self.fs.local_expiry_check)
        return stream, etag_version(etag) if pinned else None
