"""Change sets' intent records (SPEC §13): the seam a set's crash safety goes through.

Before a change set publishes its first file it writes one durable record naming every file
it will change, with the text each had and the digest of the text each will have; it removes
the record once the last file is published (or the set rolled back). A process killed in between
leaves the record behind, and the next process on that root finishes or rolls back the set
from it (`dsh_fs.tools.recover_sets`) before doing anything else.

A backend keeps the records where no tool reaches them (the workspace fences the place out)
and knows which records belong to a set still running (its writer holds it): `orphans`
hands out only the others, each held by the caller until `end`.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from dsh_fs.runtime import ServiceKey

__all__ = ["SET_RECORDS", "SET_RECORD_MAGIC", "SetFileRecord", "SetRecord", "SetRecords"]

SET_RECORD_MAGIC: Final = b"dsh-fs change set 2\n"
"""The first bytes of a record in the current format (`SetRecord.to_bytes`): the old texts
follow a header line as raw UTF-8, so storing one costs a copy, not a JSON escape of every
newline and quote (2.1 ms of a 10-file set of 100 KB files, issue 42); a record without it
is the first format's single JSON object."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetFileRecord:
    """One file of a set as its intent record names it: its old text, its new text's
    digest."""

    path: str
    """The file's display path (what recovery resolves again, and reports)."""
    before: str | None
    """The text the set read (None: the set creates the file)."""
    after: str | None
    """The SHA-256 (hex) of the UTF-8 text the set publishes (None: the set deletes the
    file): recovery only tells whether a file holds it (a set is never finished forward),
    so the record keeps the old text whole and the new one as a digest (half the bytes
    to write and fsync before the first publication)."""
    source: str | None = field(default=None, compare=False)
    """Where the provider keeps the file in its own namespace (the local provider: its real
    path), when it may hold the old text's bytes as they are: a backend may then keep the
    replaced file itself (a hard link) rather than a copy of its text. Not stored."""

    @staticmethod
    def digest(text: str) -> str:
        """The `after` of `text`."""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class SetRecord:
    """A set's intent: every file it changes, in publication order."""

    id: str
    """The set's id (its journal `group`)."""
    files: tuple[SetFileRecord, ...]
    """The files, in the order the set publishes them."""

    def to_bytes(self, kept: Mapping[int, str] | None = None) -> bytes:
        """The record as stored: `SET_RECORD_MAGIC`, one line of UTF-8 JSON (the id, and each file's
        path, the digest of its new text and the byte length of its old text), then every
        old text's UTF-8 bytes, one after the other, as they are (no escaping). `kept`: the
        files (by index) whose old text the backend keeps elsewhere, under the name given
        (stored as ``kept`` instead of the bytes)."""
        kept = kept or {}
        befores = [
            None if item.before is None else item.before.encode("utf-8") for item in self.files
        ]
        files = []
        for index, (item, data) in enumerate(zip(self.files, befores, strict=True)):
            entry: dict[str, Any] = {
                "path": item.path,
                "before": None if data is None else len(data),
                "after": item.after,
            }
            if index in kept and data is not None:
                entry["kept"] = kept[index]
                befores[index] = None
            files.append(entry)
        line = json.dumps({"id": self.id, "files": files}, ensure_ascii=False).encode("utf-8")
        return b"".join([SET_RECORD_MAGIC, line, b"\n", *(data for data in befores if data)])

    @classmethod
    def from_bytes(cls, data: bytes, kept: Callable[[str], bytes] | None = None) -> SetRecord:
        """The record `to_bytes` stored (`kept` reads an old text the backend kept by its
        name), or one in the first format (a single JSON object holding every old text
        inline, written before issue 42's cost work): a record a killed process of an
        older release left is still rolled back.

        Raises:
            ValueError: not a whole record (a torn or foreign file, a kept text gone).
        """
        if data.startswith(SET_RECORD_MAGIC):
            return cls._from_lengths(data, kept)
        try:
            body = json.loads(data.decode("utf-8"))
            files = tuple(
                SetFileRecord(path=item["path"], before=item["before"], after=item["after"])
                for item in body["files"]
            )
            record = cls(id=body["id"], files=files)
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"not a change set's intent record: {exc}") from exc
        record._check()
        return record

    @classmethod
    def _from_lengths(cls, data: bytes, kept: Callable[[str], bytes] | None) -> SetRecord:
        """`from_bytes` of the current format (after `SET_RECORD_MAGIC`)."""
        start = len(SET_RECORD_MAGIC)
        end = data.find(b"\n", start)
        try:
            if end < 0:
                raise ValueError("no header line")
            head = json.loads(data[start:end].decode("utf-8"))
            offset = end + 1
            files = []
            for item in head["files"]:
                size = item["before"]
                before: str | None = None
                name = item.get("kept")
                if name is not None and size is not None:
                    if kept is None or not isinstance(name, str):
                        raise ValueError("an old text kept where this reader cannot look")
                    # The kept file is the replaced inode itself: its bytes are the old
                    # text (whatever its length: checked when it was kept).
                    before = kept(name).decode("utf-8")
                elif size is not None:
                    if not isinstance(size, int) or size < 0 or offset + size > len(data):
                        raise ValueError("an old text past the record's end")
                    before = data[offset : offset + size].decode("utf-8")
                    offset += size
                files.append(SetFileRecord(path=item["path"], before=before, after=item["after"]))
            if offset != len(data):
                raise ValueError("bytes past the last old text")
            record = cls(id=head["id"], files=tuple(files))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, OSError) as exc:
            raise ValueError(f"not a change set's intent record: {exc}") from exc
        record._check()
        return record

    def _check(self) -> None:
        """Refuse a record whose fields are of the wrong type (a foreign file).

        Raises:
            ValueError: naming the problem.
        """
        texts = [value for item in self.files for value in (item.before, item.after)]
        names = [self.id, *(item.path for item in self.files)]
        if not all(isinstance(name, str) for name in names) or not all(
            value is None or isinstance(value, str) for value in texts
        ):
            raise ValueError("not a change set's intent record: a field of the wrong type")


class SetRecords(ABC):
    """Where a root's change sets keep their intent records (one backend's storage)."""

    location: str
    """Where the records are (a directory or a URL prefix): fenced out of every tool."""

    @abstractmethod
    async def begin(self, record: SetRecord) -> None:
        """Store `record` durably (fsynced, or a conditional PUT) before the set publishes
        anything; the writer holds it (no other process's `orphans` hands it out) until
        `end`.

        Raises:
            FsError: the record could not be stored (then the set publishes nothing).
        """

    @abstractmethod
    async def end(self, set_id: str) -> None:
        """Remove the record of `set_id` durably (the set is whole: all new or all old)
        and stop holding it.

        Raises:
            FsError: the record could not be removed.
        """

    @abstractmethod
    async def orphans(self) -> list[SetRecord]:
        """Every record no running set holds (its writer is gone), each now held by the
        caller until `end`; a torn record (the writer was killed while storing it, before
        any publication) is removed. Oldest first."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the records hold (open descriptors, locks)."""


SET_RECORDS: ServiceKey[SetRecords] = ServiceKey("set-records")
"""The context service a change set stores its intent record through (absent: a set has no
crash safety, only the roll-back against a concurrent writer)."""
