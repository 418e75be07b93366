"""The journal of files in declared encodings (SPEC §12): a change of a cp1252, GBK or
Shift-JIS file records its codec, its line counts and diff are its decoded text (never
"binary"), whatever the rules say later, and a hunk of it reverts with every byte outside
the hunk kept, on a local disk and on S3."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.journal import Journal
from tests.s3_server import shared_server

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Case:
    codec: str
    """The codec's canonical name, as the entry records it."""
    old: str
    new: str
    """A line the agent's edit replaces, and its replacement (both in the codec)."""


CASES = (
    Case("cp1252", "Größe: 10 €\r\n", "Größe: 12 € – neu\r\n"),
    Case("gbk", "第五行：旧的文本\r\n", "第五行：新的文本，汉字\r\n"),
    Case("shift_jis", "五行目：古いテキスト\r\n", "五行目：新しいテキスト、カナ\r\n"),
)

Opened = Callable[[dict[str, str] | None], AbstractAsyncContextManager[Workspace]]
"""A workspace on the backend under test, with these encodings (None: no rule at all)."""


@dataclass(frozen=True)
class Backend:
    """Where the file lives: how to put and get its bytes out of band, and open a
    workspace on it (the journal in the same place each time)."""

    put: Callable[[bytes], object]
    get: Callable[[], bytes]
    open: Opened


@pytest.fixture(params=["sandbox", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sandbox":
        root = tmp_path / "root"
        root.mkdir()
        file = root / "doc.txt"

        @asynccontextmanager
        async def local(encodings: dict[str, str] | None) -> AsyncIterator[Workspace]:
            async with Workspace.sandbox(
                root, journal=tmp_path / "store", encodings=encodings
            ) as ws:
                yield ws

        return Backend(put=file.write_bytes, get=file.read_bytes, open=local)
    s3 = shared_server()
    bucket = s3.new_bucket()
    options: dict[str, Any] = s3.storage_options()

    def put(data: bytes) -> None:
        s3.client().put_object(Bucket=bucket, Key="ws/doc.txt", Body=data)

    def get() -> bytes:
        body: bytes = s3.client().get_object(Bucket=bucket, Key="ws/doc.txt")["Body"].read()
        return body

    @asynccontextmanager
    async def remote(encodings: dict[str, str] | None) -> AsyncIterator[Workspace]:
        async with Workspace.remote(
            f"s3://{bucket}/ws", journal=True, encodings=encodings, **options
        ) as ws:
            yield ws

    return Backend(put=put, get=get, open=remote)


def _journal(ws: Workspace) -> Journal:
    assert ws.journal is not None
    return ws.journal


def _lines(case: Case, count: int = 30) -> list[str]:
    # Every line has characters of the codec; only line 5 holds the whole old line.
    lines = [f"line {n} {case.old[:2]}\r\n" for n in range(1, count + 1)]
    lines[4] = case.old
    return lines


async def _edited(backend: Backend, case: Case, lines: list[str]) -> str:
    """`lines` in the case's codec, then the agent's edit of line 5; the entry's id."""
    backend.put("".join(lines).encode(case.codec))
    async with backend.open({"*.txt": case.codec}) as ws:
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "doc.txt"})).is_error
        result = await s.call(
            "edit",
            {"file_path": "doc.txt", "old_string": case.old, "new_string": case.new},
        )
        assert not result.is_error, result.text
        (entry,) = await _journal(ws).entries()
        return entry.id


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.codec)
async def test_a_change_of_a_file_in_a_declared_codec_is_counted_and_diffed_as_its_text(
    backend: Backend, case: Case
) -> None:
    lines = _lines(case)
    entry_id = await _edited(backend, case, lines)
    async with backend.open({"*.txt": case.codec}) as ws:
        entry = await _journal(ws).entry(entry_id)
        assert entry.codec == case.codec
        assert (entry.added, entry.removed) == (1, 1)
        diff = await _journal(ws).diff(entry_id)
    assert f"-{case.old}" in diff
    assert f"+{case.new}" in diff
    assert "not text" not in diff


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.codec)
async def test_the_diff_keeps_the_codec_recorded_at_the_change_when_the_rules_are_gone(
    backend: Backend, case: Case
) -> None:
    lines = _lines(case)
    entry_id = await _edited(backend, case, lines)
    # The file moved on since (the diff comes from the entry's forward delta), and the
    # workspace that shows it declares no encoding at all.
    backend.put(b"rewritten by someone else\n")
    async with backend.open(None) as ws:
        diff = await _journal(ws).diff(entry_id)
    assert f"-{case.old}" in diff
    assert f"+{case.new}" in diff


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.codec)
async def test_a_hunk_of_a_file_in_a_declared_codec_reverts_keeping_every_other_byte(
    backend: Backend, case: Case
) -> None:
    lines = _lines(case)
    lines[24] = case.old  # a second hunk, edited by the agent too
    backend.put("".join(lines).encode(case.codec))
    async with backend.open({"*.txt": case.codec}) as ws:
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "doc.txt"})).is_error
        result = await s.call(
            "edit",
            {
                "file_path": "doc.txt",
                "old_string": case.old,
                "new_string": case.new,
                "replace_all": True,
            },
        )
        assert not result.is_error, result.text
        (entry,) = await _journal(ws).entries()
        # The user changes a line far from both hunks, in the file's codec.
        changed = "".join(lines).replace(case.old, case.new)
        user = changed.replace("line 15 ", "line fifteen, by the user ")
        backend.put(user.encode(case.codec))
        (undone,) = await _journal(ws).undo(ids=[entry.id], hunks=[2])
        assert undone.result == "undone", undone.reason
        assert undone.hunks is not None
        assert [hunk.result for hunk in undone.hunks] == ["reverted"]
        (revert, _) = await _journal(ws).entries()  # newest first
        assert revert.codec == case.codec
        assert revert.undoes == entry.id
        assert (revert.added, revert.removed) == (1, 1)
    head, _, tail = user.rpartition(case.new)
    assert backend.get() == (head + case.old + tail).encode(case.codec)


async def test_a_record_naming_no_codec_a_file_can_be_in_is_damaged(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "doc.txt").write_bytes("Größe\n".encode("cp1252"))
    async with Workspace.sandbox(
        root, journal=tmp_path / "store", encodings={"*.txt": "cp1252"}
    ) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "doc.txt"})
        result = await s.call(
            "edit", {"file_path": "doc.txt", "old_string": "Größe", "new_string": "Maß"}
        )
        assert not result.is_error, result.text
        (entry,) = await _journal(ws).entries()
        (record_path,) = (tmp_path / "store").rglob(f"{entry.id}.json")
        record = json.loads(record_path.read_text())
        assert record["codec"] == "cp1252"
        record["codec"] = "rot13"
        record_path.write_text(json.dumps(record))
        entries, problems = await _journal(ws).read()
    assert entries == []
    assert [problem.name for problem in problems] == [f"{entry.id}.json"]
    assert "codec" in problems[0].reason
