"""A change set's intent record as stored (SPEC §13): old texts as raw bytes after a header
line, a torn record refused, and the first format (one JSON object) still read."""

from __future__ import annotations

import json

import pytest

from dsh_fs.fs import SetFileRecord, SetRecord

RECORD = SetRecord(
    id="set-0011223344556677",
    files=(
        SetFileRecord(
            path="src/é.py",
            before='a "quoted"\nline\\ with \u00fc and \r\n',
            after=SetFileRecord.digest("new"),
        ),
        SetFileRecord(path="created.txt", before=None, after=SetFileRecord.digest("made")),
        SetFileRecord(path="empty.txt", before="", after=None),
    ),
)


def test_a_record_stores_old_texts_as_their_bytes_and_reads_back_equal() -> None:
    data = RECORD.to_bytes()
    assert 'a "quoted"\nline\\ with \u00fc and \r\n'.encode() in data  # not escaped
    assert SetRecord.from_bytes(data) == RECORD


def test_every_torn_prefix_of_a_record_is_refused() -> None:
    data = RECORD.to_bytes()
    for end in range(len(data)):
        with pytest.raises(ValueError, match="intent record"):
            SetRecord.from_bytes(data[:end])


def test_a_record_in_the_first_format_is_read() -> None:
    body = {
        "id": RECORD.id,
        "files": [
            {"path": item.path, "before": item.before, "after": item.after} for item in RECORD.files
        ],
    }
    assert SetRecord.from_bytes(json.dumps(body).encode()) == RECORD


def test_an_old_text_kept_elsewhere_is_read_through_the_backend() -> None:
    data = RECORD.to_bytes({0: "kept-0"})
    assert b"line\\ with" not in data
    before = RECORD.files[0].before
    assert before is not None
    found = SetRecord.from_bytes(data, {"kept-0": before.encode()}.__getitem__)
    assert found == RECORD
    with pytest.raises(ValueError, match="cannot look"):
        SetRecord.from_bytes(data)
