"""What every journal store shares (SPEC §9): entry ids, the JSON record of an entry and how
it reads back, and a failure's reason as `log` reports it. No I/O: the local store keeps
records as files, the fsspec store as objects."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import threading
import time
from typing import Any

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    EncodedText,
    FsChangeMeta,
    FsChangeStart,
    FsVersion,
    JournalEntry,
    forward_delta,
    line_counts,
)

__all__ = [
    "COUNT_LIMIT",
    "count_lines",
    "id_time_ns",
    "new_entry_id",
    "new_record",
    "record_entry",
    "record_reason",
]

COUNT_LIMIT = 16 * 1024 * 1024
"""Line counts and the forward delta are computed for content up to this size on both
sides (else null); counting is linear (`line_counts`)."""

_id_lock = threading.Lock()
_last_us = 0


def new_entry_id() -> tuple[str, str]:
    """A fresh entry id and its RFC 3339 time: UTC microseconds (strictly increasing in
    this process), then eight random hex digits (ties across processes)."""
    global _last_us
    with _id_lock:
        now = max(time.time_ns() // 1000, _last_us + 1)
        _last_us = now
    moment = dt.datetime.fromtimestamp(now / 1_000_000, tz=dt.timezone.utc)
    moment = moment.replace(microsecond=now % 1_000_000)
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f".{moment.microsecond:06d}Z"
    return f"{stamp}-{secrets.token_hex(4)}", moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_record(meta: FsChangeMeta, start: FsChangeStart, rel: str, key: str) -> dict[str, Any]:
    """The record of a change about to be published, under a fresh id (`new_entry_id`):
    its `after` and line counts are filled in by `commit`; `rel` and `key` say where the
    file is in the store's own terms."""
    entry_id, moment = new_entry_id()
    return {
        "id": entry_id,
        "time": moment,
        "session": meta.session,
        "tool": meta.tool,
        "path": start.target.display_path,
        "rel": rel,
        "key": key,
        "from": meta.source or (start.source.display_path if start.source is not None else None),
        "source_version": start.source_version,
        "directory": start.directory,
        "link": start.link,
        "before": start.before,
        "after": None,
        "added": None,
        "removed": None,
        "undoes": meta.undoes,
        "mode": start.mode,
        "size": start.size,
    }


def count_lines(
    record: dict[str, Any], before: bytes | None, content: bytes | EncodedText | None
) -> None:
    """Fill in what the record keeps of the published `content` (the pre-image being
    `before`): ``added`` and ``removed`` lines (as ``git diff --numstat``) and the forward
    ``delta`` when each side that exists is known and at most `COUNT_LIMIT` bytes, else they
    stay null; the ``digest`` of `content` whenever it is at hand (SPEC §9.1's guard)."""
    data: bytes | None
    if content is None or isinstance(content, bytes):
        data = content
        if content is not None:
            record["digest"] = hashlib.sha256(content).hexdigest()
    else:
        hasher = hashlib.sha256()
        for part in content.parts:
            hasher.update(part)
        record["digest"] = hasher.hexdigest()
        data = content.to_bytes() if content.size <= COUNT_LIMIT else None
    known_before = record["before"] is None or (before is not None and len(before) <= COUNT_LIMIT)
    known_after = record["after"] is None or (data is not None and len(data) <= COUNT_LIMIT)
    if known_before and known_after:
        record["added"], record["removed"] = line_counts(before, data)
        if data is not None:
            delta = forward_delta(before if record["before"] is not None else None, data)
            record["delta"] = list(delta) if delta is not None else None


def id_time_ns(entry_id: str) -> int:
    """The time an entry id carries, in nanoseconds since the epoch."""
    moment = dt.datetime.strptime(entry_id[:23], "%Y%m%dT%H%M%S.%fZ").replace(
        tzinfo=dt.timezone.utc
    )
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def record_entry(record: dict[str, Any], has_pre: bool, stem: str | None = None) -> JournalEntry:
    """The entry a stored record describes (`stem`: the name it was stored under).

    Raises:
        KeyError, TypeError, ValueError: a field is missing or of the wrong type, or the
            record's id is not its name.
    """

    def text(key: str) -> str:
        value = record[key]
        if not isinstance(value, str):
            raise TypeError(f"{key} is not a string")
        return value

    def optional_text(key: str) -> str | None:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{key} is not a string")
        return value

    def delta() -> tuple[int, int, str] | None:
        value = record.get("delta")
        if value is None:
            return None
        match value:
            case [int(head), int(tail), str(middle)] if head >= 0 and tail >= 0:
                return head, tail, middle
        raise TypeError("delta is not [head, tail, middle]")

    def optional_int(key: str) -> int | None:
        value = record.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"{key} is not a number")
        return value

    entry_id = text("id")
    if stem is not None and entry_id != stem:
        raise ValueError("its id is not its name")
    before = optional_text("before")
    pruned = record.get("pruned") is True
    directory = record.get("directory") is True
    undoable = not pruned and (has_pre if before is not None and not directory else True)
    return JournalEntry(
        id=entry_id,
        time=text("time"),
        session=text("session"),
        tool=text("tool"),
        path=text("path"),
        rel=text("rel"),
        source=optional_text("from"),
        before=FsVersion(before) if before is not None else None,
        after=FsVersion(a) if (a := optional_text("after")) is not None else None,
        added=optional_int("added"),
        removed=optional_int("removed"),
        undoable=undoable,
        undoes=optional_text("undoes"),
        mode=optional_int("mode"),
        size=optional_int("size"),
        source_version=FsVersion(v) if (v := optional_text("source_version")) else None,
        directory=directory,
        link=record.get("link") is True,
        digest=optional_text("digest"),
        after_mode=optional_int("after_mode"),
        delta=delta(),
    )


def record_reason(exc: BaseException) -> str:
    """Why a record could not be read, as `log` reports it."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]}"
    if isinstance(exc, FsError):
        return exc.message
    return str(exc)
