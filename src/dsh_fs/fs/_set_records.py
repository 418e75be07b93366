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
from dataclasses import dataclass
from typing import Any

from dsh_fs.runtime import ServiceKey

__all__ = ["SET_RECORDS", "SetFileRecord", "SetRecord", "SetRecords"]


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

    def to_bytes(self) -> bytes:
        """The record as stored (UTF-8 JSON)."""
        body: dict[str, Any] = {
            "id": self.id,
            "files": [
                {"path": item.path, "before": item.before, "after": item.after}
                for item in self.files
            ],
        }
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> SetRecord:
        """The record `to_bytes` stored.

        Raises:
            ValueError: not a whole record (a torn or foreign file).
        """
        try:
            body = json.loads(data.decode("utf-8"))
            files = tuple(
                SetFileRecord(path=item["path"], before=item["before"], after=item["after"])
                for item in body["files"]
            )
            record = cls(id=body["id"], files=files)
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"not a change set's intent record: {exc}") from exc
        texts = [value for item in files for value in (item.before, item.after)]
        names = [record.id, *(item.path for item in files)]
        if not all(isinstance(name, str) for name in names) or not all(
            value is None or isinstance(value, str) for value in texts
        ):
            raise ValueError("not a change set's intent record: a field of the wrong type")
        return record


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
