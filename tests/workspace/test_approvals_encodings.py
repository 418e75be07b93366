"""Approvals on files in other encodings (SPEC §11.2 with §12): the proposal is computed
through the file's codec, its diff shows decoded text, its digest is of the bytes that land
(the codec and BOM kept), and publication is pinned to those bytes."""

from __future__ import annotations

import codecs
import dataclasses
import hashlib
from pathlib import Path

import pytest

from dsh_fs import Approval, Proposal, Workspace

pytestmark = pytest.mark.anyio

ENCODINGS = {"legacy/**": "cp1252", "zh/**": "gbk"}

CASES = [
    # (path, the file's bytes, old, new, the bytes after, the codec the proposal names)
    (
        "legacy/a.txt",
        "Grüße\r\n€ 5\r\n".encode("cp1252"),
        "€ 5",
        "€ 6 – ok",
        "Grüße\r\n€ 6 – ok\r\n".encode("cp1252"),
        "cp1252",
    ),
    (
        "zh/b.txt",
        "中文文本\n第二行\n".encode("gbk"),
        "第二行",
        "第三行",
        "中文文本\n第三行\n".encode("gbk"),
        "gbk",
    ),
    (
        "u16.txt",
        codecs.BOM_UTF16_LE + "héllo\nwörld\n".encode("utf-16-le"),
        "wörld",
        "Welt",
        codecs.BOM_UTF16_LE + "héllo\nWelt\n".encode("utf-16-le"),
        "utf-16-le",
    ),
]


@pytest.mark.parametrize(("path", "raw", "old", "new", "after", "codec"), CASES)
async def test_an_edit_in_a_declared_codec_is_proposed_decoded_and_lands_the_approved_bytes(
    tmp_path: Path, path: str, raw: bytes, old: str, new: str, after: bytes, codec: str
) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(raw)
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        assert (tmp_path / path).read_bytes() == raw  # nothing lands while the person looks
        return Approval(approved=True)

    async with Workspace.sandbox(tmp_path, encodings=ENCODINGS, approve=approve) as ws:
        s = ws.session()
        read = await s.call("read", {"file_path": path})
        assert not read.is_error, read.text
        edited = await s.call("edit", {"file_path": path, "old_string": old, "new_string": new})
        assert not edited.is_error, edited.text
    (proposal,) = seen
    (change,) = proposal.changes
    assert f"-{old}" in proposal.diff
    assert f"+{new}" in proposal.diff
    assert change.encoding == codec
    assert change.digest == hashlib.sha256(after).hexdigest()
    assert (tmp_path / path).read_bytes() == after


async def test_a_replacement_the_codec_cannot_encode_is_refused_before_anyone_is_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "legacy").mkdir()
    raw = "café\n".encode("cp1252")
    (tmp_path / "legacy" / "a.txt").write_bytes(raw)
    asked: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        asked.append(proposal)
        return Approval(approved=True)

    async with Workspace.local(tmp_path, encodings=ENCODINGS, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "legacy/a.txt"})
        refused = await s.call(
            "edit", {"file_path": "legacy/a.txt", "old_string": "café", "new_string": "café ✓"}
        )
        written = await s.call("write", {"file_path": "legacy/a.txt", "content": "✓\n"})
    assert (refused.code, written.code) == ("FS_NOT_ENCODABLE", "FS_NOT_ENCODABLE")
    assert refused.text.endswith('cp1252 cannot encode "✓" (U+2713) in new_string')
    assert written.text.endswith('cp1252 cannot encode "✓" (U+2713) in content')
    assert asked == []
    assert (tmp_path / "legacy" / "a.txt").read_bytes() == raw


async def test_a_write_over_a_file_with_a_bom_is_pinned_to_the_bytes_with_its_codec_and_bom(
    tmp_path: Path,
) -> None:
    (tmp_path / "u16.txt").write_bytes(codecs.BOM_UTF16_BE + "alt\n".encode("utf-16-be"))
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        return Approval(approved=True)

    async with Workspace.local(tmp_path, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "u16.txt"})
        written = await s.call("write", {"file_path": "u16.txt", "content": "neu – ü\n"})
        assert not written.is_error, written.text
    after = codecs.BOM_UTF16_BE + "neu – ü\n".encode("utf-16-be")
    (change,) = seen[0].changes
    assert (change.encoding, change.digest) == ("utf-16-be", hashlib.sha256(after).hexdigest())
    assert "-\ufeffalt\n+\ufeffneu – ü\n" in seen[0].diff  # the BOM is kept, on both sides
    assert (tmp_path / "u16.txt").read_bytes() == after


async def _held_cp1252(ws: Workspace) -> Proposal:
    kept: list[Proposal] = []
    s = ws.session()
    s.approver = lambda proposal: kept.append(proposal)
    await s.call("read", {"file_path": "legacy/a.txt"})
    held = await s.call(
        "edit", {"file_path": "legacy/a.txt", "old_string": "€ 5", "new_string": "€ 7"}
    )
    assert held.code == "FS_NOT_APPROVED"
    (proposal,) = kept
    return Proposal.from_json(proposal.to_json())


async def test_a_held_proposal_in_a_codec_applies_later_pinned_to_its_bytes(
    tmp_path: Path,
) -> None:
    (tmp_path / "legacy").mkdir()
    raw = "Grüße\r\n€ 5\r\n".encode("cp1252")
    (tmp_path / "legacy" / "a.txt").write_bytes(raw)
    async with Workspace.local(tmp_path, encodings=ENCODINGS, approve="changes") as ws:
        proposal = await _held_cp1252(ws)
        (change,) = proposal.changes
        assert change.encoding == "cp1252"
        s = ws.session()
        # Content that no longer matches the digest, and a codec other than the file's.
        tampered = dataclasses.replace(
            proposal, changes=(dataclasses.replace(change, content="Grüße\r\n€ 8\r\n"),)
        )
        recoded = dataclasses.replace(
            proposal, changes=(dataclasses.replace(change, encoding="latin-1"),)
        )
        assert (await s.apply(tampered, Approval(approved=True))).code == "FS_NOT_APPROVED"
        assert (await s.apply(recoded, Approval(approved=True))).code == "FS_NOT_APPROVED"
        assert (tmp_path / "legacy" / "a.txt").read_bytes() == raw
        applied = await s.apply(proposal, Approval(approved=True))
        assert not applied.is_error, applied.text
    assert (tmp_path / "legacy" / "a.txt").read_bytes() == "Grüße\r\n€ 7\r\n".encode("cp1252")


async def test_a_held_proposal_is_refused_when_the_files_codec_is_no_longer_the_one_shown(
    tmp_path: Path,
) -> None:
    (tmp_path / "legacy").mkdir()
    raw = "Grüße\r\n€ 5\r\n".encode("cp1252")
    (tmp_path / "legacy" / "a.txt").write_bytes(raw)
    async with Workspace.local(tmp_path, encodings=ENCODINGS, approve="changes") as ws:
        proposal = await _held_cp1252(ws)
    # The same root (the same workspace id) served tomorrow with cp1250 for the file: the
    # proposal shows cp1252, so it is not what was approved.
    async with Workspace.local(
        tmp_path, encodings={"legacy/**": "cp1250"}, approve="changes"
    ) as other:
        result = await other.session().apply(proposal, Approval(approved=True))
    assert result.code == "FS_NOT_APPROVED"
    assert (tmp_path / "legacy" / "a.txt").read_bytes() == raw


async def test_a_held_set_over_a_file_in_a_codec_applies_later_with_its_bytes(
    tmp_path: Path,
) -> None:
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "a.txt").write_bytes("Grüße €\n".encode("cp1252"))
    (tmp_path / "b.txt").write_text("plain\n")
    kept: list[Proposal] = []
    async with Workspace.local(tmp_path, encodings=ENCODINGS, approve="changes") as ws:
        s = ws.session()
        s.approver = lambda proposal: kept.append(proposal)
        await s.call("read", {"file_path": "legacy/a.txt"})
        await s.call("read", {"file_path": "b.txt"})
        held = await s.call(
            "edit_files",
            {
                "edits": [
                    {"file_path": "legacy/a.txt", "old_string": "€", "new_string": "£"},
                    {"file_path": "b.txt", "old_string": "plain", "new_string": "plain – ü"},
                ]
            },
        )
        assert held.code == "FS_NOT_APPROVED", held.text
        (proposal,) = kept
        assert [change.encoding for change in proposal.changes] == ["cp1252", None]
        assert "-Grüße €\n+Grüße £\n" in proposal.diff
        applied = await s.apply(Proposal.from_json(proposal.to_json()), Approval(approved=True))
        assert not applied.is_error, applied.text
    assert (tmp_path / "legacy" / "a.txt").read_bytes() == "Grüße £\n".encode("cp1252")
    assert (tmp_path / "b.txt").read_text() == "plain – ü\n"
