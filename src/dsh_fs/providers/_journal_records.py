"""What every journal store shares about records (SPEC §9, §9.1): entry ids, the JSON record
of an entry, how it reads back and is vetted (a tampered or damaged record is reported,
never applied), and a failure's reason as `log` reports it. No I/O: the local store keeps
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
    ChangeKind,
    EncodedText,
    FsChangeMeta,
    FsChangeStart,
    FsVersion,
    JournalEntry,
    canonical_codec,
    forward_delta,
    line_counts,
    text_change,
    transcoded_utf8,
    utf16_as_utf8,
)

__all__ = [
    "COUNT_LIMIT",
    "RECORD_LIMIT",
    "Damaged",
    "content_fields",
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

RECORD_LIMIT = 1 << 20
"""The largest record a store reads (a record holds paths and a clipped label: a few KiB);
a larger one is damaged, never read into memory."""

_MAX_INT = 1 << 62
"""No count, size or id field of a real record reaches this."""

_ID_MAX = (1 << 32) - 1
"""The largest user or group id."""

_DELTA_MAX = 128 * 1024
"""The longest middle a forward delta holds (`forward_delta` keeps at most this many
bytes, so at most this many characters): a longer one was not written by a store."""


class Damaged(ValueError):
    """A record or pre-image the store will not use: its reason is what `log` reports."""


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
    hunks: dict[str, Any] = {}
    if meta.hunks is not None:
        hunks = {"hunks": list(meta.hunks), "hunk_count": meta.hunk_count}
    record: dict[str, Any] = hunks | {
        "id": entry_id,
        "time": moment,
        "session": meta.session,
        "tool": meta.tool,
        "path": start.target.display_path,
        "rel": rel,
        "key": key,
        "from": meta.source or (start.source.display_path if start.source is not None else None),
        "source_version": start.source_version,
        "kind": start.kind.value,
        "before": start.before,
        "after": None,
        "added": None,
        "removed": None,
        "undoes": meta.undoes,
        "group": meta.group,
        "mode": start.mode,
        "size": start.size,
        "uid": start.uid,
        "gid": start.gid,
        **({"codec": start.codec} if start.codec is not None else {}),
    }
    if meta.approved_by is not None:  # only an approved change carries the keys (SPEC §11.2)
        record["approved_by"] = meta.approved_by
        record["approval_note"] = meta.approval_note
    return record


def _hunks(record: dict[str, Any]) -> tuple[tuple[int, ...] | None, int | None]:
    """A revert by hunk's ``hunks`` (numbers from 1) and ``hunk_count``, vetted: numbers
    within the count, no more of them than it (None, None: not a revert by hunk)."""
    value = record.get("hunks")
    if value is None:
        return None, None
    count = _optional_int(record, "hunk_count")
    if not isinstance(value, list) or count is None:
        raise TypeError("hunks is not a list of numbers with their count")
    if len(value) > count or not all(
        type(n) is int and 1 <= n <= count
        for n in value  # bool is no hunk number
    ):
        raise Damaged(f"hunks {_shown(value)} are not hunks of {count}")
    return tuple(value), count


def count_lines(
    record: dict[str, Any],
    before: bytes | None,
    content: bytes | EncodedText | None,
    digest: bytes | None = None,
    before_utf8: bool = False,
) -> None:
    """Fill in what the record keeps of the published `content` (the pre-image being
    `before`, known to be valid UTF-8 when `before_utf8`): `content_fields` of the record's
    change."""
    codec = record.get("codec") if isinstance(record.get("codec"), str) else None
    record.update(
        content_fields(
            created=record["before"] is None,
            removed=record["after"] is None,
            before=before,
            content=content,
            digest=digest,
            codec=codec,
            before_utf8=before_utf8,
        )
    )


def content_fields(
    *,
    created: bool,
    removed: bool,
    before: bytes | None,
    content: bytes | EncodedText | None,
    digest: bytes | None = None,
    codec: str | None = None,
    before_utf8: bool = False,
) -> dict[str, Any]:
    """What a record keeps of the published `content` (the pre-image being `before`; none
    for a change that `created` the file, none after one that `removed` it): ``added`` and
    ``removed`` lines (as ``git diff --numstat``) and the forward ``delta`` when each side
    that exists is known and at most `COUNT_LIMIT` bytes (else left out: they stay null);
    the ``digest`` of `content` whenever it is at hand (SPEC §9.1's guard): the sha256
    `digest` the provider computed already, else hashed here, unless the delta applied to
    the pre-image makes the very bytes again (`JournalEntry.published_digest` makes it
    then, when a guard needs it). `before_utf8`: `before` is known to be valid UTF-8 (the
    bytes of the `EncodedText` the provider read). Pure, and safe to run beside the
    publication (a store starts it while the content is written, `FsChangeStart.after`).
    """
    fields: dict[str, Any] = {}
    data: bytes | None
    pieces: EncodedText | None = None  # UTF-8 in pieces (an edit's), compared unjoined
    if content is None or isinstance(content, bytes):
        data = content
    elif content.size > COUNT_LIMIT:
        data = None
    elif codec is None:
        # UTF-8, so no UTF-16 BOM (0xFE and 0xFF are no UTF-8 bytes): its text is its bytes.
        data, pieces = None, content
    else:
        data = content.to_bytes()
    told = False  # whether the delta tells the published bytes exactly
    known_before = created or (before is not None and len(before) <= COUNT_LIMIT)
    known_after = removed or pieces is not None or (data is not None and len(data) <= COUNT_LIMIT)
    if known_before and known_after:
        # SPEC §12: both sides counted as their text, in the codec the change was made in;
        # the delta is then relative to the pre-image's text as UTF-8 (`JournalEntry.delta`).
        before_text = transcoded_utf8(before, codec)
        base = None if created else before_text
        if pieces is not None and base is not before_text:
            data, pieces = pieces.to_bytes(), None  # the rare mismatch: the general path
        text = pieces if pieces is not None else transcoded_utf8(data, codec)
        if (
            text is not None
            and base is before_text
            and utf16_as_utf8(before_text) is before_text
            and (pieces is not None or utf16_as_utf8(data) is text)
        ):
            # One trim and one text check for both (the usual change); the pre-image is
            # known to be UTF-8 where the provider said so and it was not transcoded.
            fields["added"], fields["removed"], delta = text_change(
                base, text, before_utf8=before_utf8 and before_text is before
            )
            exact = pieces is not None or text is data
        else:
            if isinstance(text, EncodedText):
                data = text = text.to_bytes()
            fields["added"], fields["removed"] = line_counts(before_text, text)
            delta = forward_delta(base, text) if text is not None else None
            exact = text is data
        if text is not None:
            fields["delta"] = list(delta) if delta is not None else None
            # Relative to the very bytes (UTF-8, no UTF-16 BOM transcoded on either side):
            # the pre-image and the delta make the published bytes again.
            told = delta is not None and codec is None and before_text is before and exact
    if content is not None and (digest is not None or not told):
        if digest is None:
            hasher = hashlib.sha256()
            for part in content.parts if isinstance(content, EncodedText) else (content,):
                hasher.update(part)
            digest = hasher.digest()
        fields["digest"] = digest.hex()
    return fields


def id_time_ns(entry_id: str) -> int:
    """The time an entry id carries, in nanoseconds since the epoch."""
    moment = dt.datetime.strptime(entry_id[:23], "%Y%m%dT%H%M%S.%fZ").replace(
        tzinfo=dt.timezone.utc
    )
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def record_entry(record: dict[str, Any], has_pre: bool, stem: str | None = None) -> JournalEntry:
    """The entry a stored record describes (`stem`: the name it was stored under), vetted:
    a field of the wrong type or an impossible value (a mode outside 0o7777, a negative or
    huge number, a path with ``..`` or not where its other paths say) makes it damaged.

    Raises:
        KeyError, TypeError, ValueError: a field is missing or of the wrong type, or the
            record's id is not its name (`Damaged` for an impossible value).
    """

    def text(key: str) -> str:
        return _text(record, key)

    def optional_text(key: str) -> str | None:
        return _text(record, key) if record.get(key) is not None else None

    def optional_int(key: str) -> int | None:
        return _optional_int(record, key)

    entry_id = text("id")
    if stem is not None and entry_id != stem:
        raise ValueError("its id is not its name")
    before = optional_text("before")
    pruned = record.get("pruned") is True
    kind = record_kind(record)
    directory = kind is ChangeKind.DIRECTORY
    undoable = not pruned and (has_pre if before is not None and not directory else True)
    _vet_paths(record, text("path"), text("rel"), optional_text("from"))
    mode, _, _ = record_owner(record)  # uid and gid vetted too: an undo gives them back
    hunks, hunk_count = _hunks(record)
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
        mode=mode,
        size=optional_int("size"),
        source_version=FsVersion(v) if (v := optional_text("source_version")) else None,
        kind=kind,
        digest=_digest(record),
        after_mode=_optional_int(record, "after_mode", 0o7777),
        after_generation=_optional_int(record, "after_generation", 0xFFFFFFFF),
        before_generation=_optional_int(record, "before_generation", 0xFFFFFFFF),
        delta=_delta(record),
        group=optional_text("group"),
        hunks=hunks,
        hunk_count=hunk_count,
        approved_by=optional_text("approved_by"),
        approval_note=optional_text("approval_note"),
        codec=_codec(record),
    )


def record_kind(record: dict[str, Any]) -> ChangeKind:
    """The record's change kind (``kind``; older records carry ``directory`` / ``link``).

    Raises:
        Damaged: an unknown kind.
    """
    kind = record.get("kind")
    if kind is None:
        if record.get("directory") is True:
            return ChangeKind.DIRECTORY
        return ChangeKind.LINK if record.get("link") is True else ChangeKind.FILE
    try:
        return ChangeKind(kind)
    except ValueError:
        raise Damaged(f"kind {_shown(kind)} is not a change kind") from None


def record_owner(record: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    """The recorded ``(mode, uid, gid)`` of the replaced file, vetted (None: not recorded).

    Raises:
        TypeError, Damaged: a field of the wrong type or out of range.
    """
    return (
        _optional_int(record, "mode", 0o7777),
        _optional_int(record, "uid", _ID_MAX),
        _optional_int(record, "gid", _ID_MAX),
    )


def _text(record: dict[str, Any], key: str) -> str:
    value = record[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is not a string")
    if "\0" in value:
        raise Damaged(f"{key} holds a NUL character")
    return value


def _optional_int(record: dict[str, Any], key: str, most: int = _MAX_INT) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{key} is not a number")
    if not 0 <= value <= most:
        raise Damaged(f"{key} {_shown(value)} is out of range")
    return value


def _digest(record: dict[str, Any]) -> str | None:
    """The record's ``digest``: 64 lowercase hex digits (a sha256), or None."""
    value = record.get("digest")
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("digest is not a string")
    if len(value) != 64 or value.strip("0123456789abcdef"):
        raise Damaged(f"digest {_shown(value)} is not a sha256")
    return value


def _codec(record: dict[str, Any]) -> str | None:
    """The record's ``codec`` (SPEC §12): a codec Python knows, by its canonical name."""
    value = record.get("codec")
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("codec is not a string")
    try:
        name = canonical_codec(value)
    except ValueError:
        raise Damaged(f"codec {_shown(value)} is not a codec a file can be in") from None
    if name != value:
        raise Damaged(f"codec {_shown(value)} is not a canonical codec name")
    return name


def _delta(record: dict[str, Any]) -> tuple[int, int, str] | None:
    """The record's forward ``delta`` ``[head, tail, middle]``, vetted: counts in range, a
    middle no longer than `forward_delta` ever writes (its characters are at least bytes)."""
    value = record.get("delta")
    if value is None:
        return None
    match value:
        case [int(head), int(tail), str(middle)] if type(head) is int and type(tail) is int:
            pass  # bool is an int to `match`: true/false are no counts
        case _:
            raise TypeError("delta is not [head, tail, middle]")
    if not (0 <= head <= _MAX_INT and 0 <= tail <= _MAX_INT):
        raise Damaged("delta's head or tail is out of range")
    if len(middle) > _DELTA_MAX:
        raise Damaged(f"delta is longer than {_DELTA_MAX} characters")
    return head, tail, middle


def _shown(value: object) -> str:
    """A field's value for a reason, short (a huge number is not printed whole)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _vet_paths(record: dict[str, Any], path: str, rel: str, source: str | None) -> None:
    """A record's paths agree and none climbs out: no ``..`` segment anywhere; a path
    relative to the root (`rel`) is the tail of the display path and of the key.

    Raises:
        Damaged: they don't.
    """
    key = record.get("key")
    for name, value in (("path", path), ("rel", rel), ("from", source), ("key", key)):
        if isinstance(value, str) and ".." in value.split("/"):
            raise Damaged(f"{name} climbs out of its root (a '..' segment)")
    if rel in ("", ".") or rel.startswith("/"):
        return
    tail = "/" + rel
    if not path.endswith(tail) or (isinstance(key, str) and not key.endswith(tail)):
        raise Damaged("path lies outside its root (its paths disagree)")


def record_reason(exc: BaseException) -> str:
    """Why a record could not be read, as `log` reports it."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, FsError):
        return exc.message
    return str(exc)
