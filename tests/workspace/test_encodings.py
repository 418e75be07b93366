"""Files in other encodings through the tools (SPEC §12): `encodings=` and
`encoding_fallback=` on the workspace, the read value's `encoding` and `bom`, the §6
rendering unchanged, large files windowed and resumed in their codec, and a dialect."""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import run_apply_patch
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

ENCODINGS = {"legacy/**": "cp1252", "*.gbk": "gbk"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = (tmp_path / "w").resolve()
    (top / "legacy").mkdir(parents=True)
    (top / "legacy" / "a.txt").write_bytes("Grüße\r\n€ 5\r\n".encode("cp1252"))
    (top / "u.txt").write_bytes(codecs.BOM_UTF16_LE + "héllo\nwörld\n".encode("utf-16-le"))
    (top / "plain.txt").write_bytes("héllo\nwörld\n".encode())
    return top


@pytest.fixture
async def session(root: Path) -> AsyncIterator[Session]:
    async with Workspace.sandbox(root, encodings=ENCODINGS) as workspace:
        yield workspace.session()


async def test_a_read_renders_decoded_text_as_utf8_text_renders_and_names_the_encoding(
    session: Session, root: Path
) -> None:
    u16 = await session.call("read", {"file_path": "u.txt"})
    plain = await session.call("read", {"file_path": "plain.txt"})
    legacy = await session.call("read", {"file_path": "legacy/a.txt"})
    assert u16.text == plain.text.replace("plain.txt", "u.txt")
    assert legacy.text.splitlines()[3:5] == ["1: Grüße", "2: € 5"]
    assert u16.value is not None
    assert plain.value is not None
    assert legacy.value is not None
    assert (u16.value["encoding"], u16.value["bom"]) == ("utf-16-le", True)
    assert (plain.value["encoding"], plain.value["bom"]) == ("utf-8", False)
    assert (legacy.value["encoding"], legacy.value["bom"]) == ("cp1252", False)


async def test_an_edit_through_the_tool_changes_only_the_span(session: Session, root: Path) -> None:
    await session.call("read", {"file_path": "legacy/a.txt"})
    result = await session.call(
        "edit", {"file_path": "legacy/a.txt", "old_string": "€ 5", "new_string": "€ 6 – ok"}
    )
    assert not result.is_error, result.text
    assert (root / "legacy" / "a.txt").read_bytes() == "Grüße\r\n€ 6 – ok\r\n".encode("cp1252")
    refused = await session.call(
        "edit", {"file_path": "legacy/a.txt", "old_string": "ok", "new_string": "✓"}
    )
    assert (refused.code, refused.text) == (
        "FS_NOT_ENCODABLE",
        f'Error: cannot edit "{root}/legacy/a.txt": cp1252 cannot encode "✓" (U+2713) '
        "in new_string",
    )


async def test_a_large_file_is_windowed_and_resumed_in_its_codec(
    session: Session, root: Path
) -> None:
    lines = [f"{n:06d} 中文文本 第{n}行" for n in range(40_000)]  # about 1 MB of GBK
    (root / "big.gbk").write_bytes(("\n".join(lines) + "\n").encode("gbk"))
    first = await session.call("read", {"file_path": "big.gbk", "offset": 30_000, "limit": 3})
    again = await session.call("read", {"file_path": "big.gbk", "offset": 39_998, "limit": 5})
    assert first.value is not None
    assert again.value is not None
    assert [line["text"] for line in first.value["lines"]] == lines[29_999:30_002]
    assert [line["text"] for line in again.value["lines"]] == lines[39_997:]
    assert (again.value["total_lines"], again.value["encoding"]) == (40_000, "gbk")


async def test_the_dialects_follow_the_same_rules(session: Session, root: Path) -> None:
    await session.call("read", {"file_path": "legacy/a.txt"})
    outcome = await run_apply_patch(
        session,
        {"type": "update_file", "path": "legacy/a.txt", "diff": "@@\n-€ 5\n+€ 7\n"},
    )
    assert outcome["status"] == "completed", outcome
    assert (root / "legacy" / "a.txt").read_bytes() == "Grüße\r\n€ 7\r\n".encode("cp1252")


async def test_a_fallback_codec_reads_a_file_that_is_not_utf8(root: Path) -> None:
    (root / "old.txt").write_bytes("naïve café\n".encode("cp1252"))
    async with Workspace.local(root) as workspace:
        refused = await workspace.session().call("read", {"file_path": "old.txt"})
    async with Workspace.local(root, encoding_fallback=["cp1252"]) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": "old.txt"})
        plain = await session.call("read", {"file_path": "plain.txt"})
        await session.call(
            "edit", {"file_path": "old.txt", "old_string": "café", "new_string": "Café"}
        )
    assert refused.code == "FS_NOT_TEXT"
    assert read.value is not None
    assert read.value["encoding"] == "cp1252"
    assert read.value["lines"] == [{"number": 1, "text": "naïve café"}]
    assert plain.value is not None
    assert plain.value["encoding"] == "utf-8"
    assert (root / "old.txt").read_bytes() == "naïve Café\n".encode("cp1252")


async def test_a_large_file_in_a_fallback_codec_is_resumed_in_it(root: Path) -> None:
    lines = [f"{n:06d} café crème brûlée" for n in range(60_000)]
    (root / "old.txt").write_bytes(("\n".join(lines) + "\n").encode("cp1252"))
    async with Workspace.local(root, encoding_fallback=["cp1252"]) as workspace:
        session = workspace.session()
        first = await session.call("read", {"file_path": "old.txt", "offset": 2, "limit": 1})
        last = await session.call("read", {"file_path": "old.txt", "offset": 59_999})
    assert first.value is not None
    assert last.value is not None
    assert [line["text"] for line in last.value["lines"]] == lines[59_998:]
    assert last.value["encoding"] == "cp1252"


@pytest.mark.parametrize("fallback", ["cp1252", "ascii, cp1252"])
async def test_a_fallback_given_as_a_string_names_codecs_not_characters(
    root: Path, fallback: str
) -> None:
    # A string was iterated character by character: "unknown encoding 'c'".
    (root / "old.txt").write_bytes("naïve café\n".encode("cp1252"))
    async with Workspace.local(root, encoding_fallback=fallback) as workspace:
        read = await workspace.session().call("read", {"file_path": "old.txt"})
    assert read.value is not None
    assert read.value["lines"] == [{"number": 1, "text": "naïve café"}]


def test_an_unknown_codec_is_an_error_at_start_naming_it(root: Path) -> None:
    with pytest.raises(ValueError, match="unknown encoding 'klingon'"):
        Workspace.local(root, encodings={"*.txt": "klingon"})
    with pytest.raises(ValueError, match="unknown encoding 'nope'"):
        Workspace.sandbox(root, encoding_fallback=["nope"])


async def test_the_journal_shows_a_utf16_edit_as_decoded_text_and_undoes_it_byte_for_byte(
    root: Path, tmp_path: Path
) -> None:
    before = (root / "u.txt").read_bytes()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as workspace:
        assert workspace.journal is not None
        session = workspace.session(label="agent")
        await session.call("read", {"file_path": "u.txt"})
        await session.call(
            "edit", {"file_path": "u.txt", "old_string": "wörld", "new_string": "Welt"}
        )
        (entry,) = await workspace.journal.entries()
        diff = await workspace.journal.diff(entry.id)
        assert "-wörld\n+Welt\n" in diff
        assert (entry.added, entry.removed) == (1, 1)
        (undone,) = await workspace.journal.undo(ids=[entry.id])
    assert undone.result == "undone"
    assert (root / "u.txt").read_bytes() == before


async def test_editorconfig_charset_declares_encodings_and_a_rule_given_wins(root: Path) -> None:
    (root / ".editorconfig").write_text(
        "root = true\n\n[*]\ncharset = utf-8\n\n[legacy/**.txt]\ncharset = latin1\n\n"
        "[*.{u16,utf16}]\ncharset = utf-16le\n",
        encoding="utf-8",
    )
    (root / "legacy" / "deeper").mkdir()
    (root / "legacy" / "deeper" / ".editorconfig").write_text(
        "[x.txt]\ncharset = utf-8-bom\n", encoding="utf-8"
    )
    (root / "legacy" / "l.txt").write_bytes("Grüße €\n".encode("latin-1", "replace"))
    (root / "w.u16").write_bytes("wide\n".encode("utf-16-le"))
    async with Workspace.sandbox(root, editorconfig=True) as workspace:
        session = workspace.session()
        latin = await session.call("read", {"file_path": "legacy/l.txt"})
        wide = await session.call("read", {"file_path": "w.u16"})
        await session.call("write", {"file_path": "legacy/deeper/x.txt", "content": "x\n"})
    assert latin.value is not None
    assert wide.value is not None
    assert (latin.value["encoding"], latin.value["lines"][0]["text"]) == ("iso8859-1", "Grüße ?")
    assert (wide.value["encoding"], wide.value["lines"][0]["text"]) == ("utf-16-le", "wide")
    assert (root / "legacy" / "deeper" / "x.txt").read_bytes() == codecs.BOM_UTF8 + b"x\n"
    async with Workspace.sandbox(root, encodings={"legacy/": "cp1252"}) as workspace:
        ruled = await workspace.session().call("read", {"file_path": "legacy/l.txt"})
    assert ruled.value is not None
    assert ruled.value["encoding"] == "cp1252"
    async with Workspace.sandbox(root) as workspace:
        ignored = await workspace.session().call("read", {"file_path": "legacy/l.txt"})
    assert ignored.code == "FS_NOT_TEXT"


async def test_a_large_remote_file_in_a_fallback_codec_is_resumed_in_it() -> None:
    import uuid

    from fsspec.implementations.memory import MemoryFileSystem

    lines = [f"{n:07d} café crème brûlée" for n in range(200_000)]  # past a 4 MiB chunk
    root = f"/enc-{uuid.uuid4().hex}"
    MemoryFileSystem().pipe(f"{root}/old.txt", ("\n".join(lines) + "\n").encode("cp1252"))
    try:
        url = f"memory://{root}"
        async with Workspace.remote(url, encoding_fallback=["cp1252"]) as workspace:
            session = workspace.session()
            first = await session.call("read", {"file_path": "old.txt", "offset": 2, "limit": 1})
            last = await session.call("read", {"file_path": "old.txt", "offset": 199_999})
        assert first.value is not None
        assert last.value is not None
        assert [line["text"] for line in last.value["lines"]] == lines[199_998:]
        assert last.value["encoding"] == "cp1252"
    finally:
        MemoryFileSystem().rm(root, recursive=True)


def _a_then_b(count: int) -> tuple[list[str], bytes]:
    """Lines whose first MiB is text in cp1252 and in cp1251 alike (``é`` in one is ``й``
    in the other), then a line with 0x81: no cp1252 character, Ѓ in cp1251."""
    lines = [f"{n:07d} caf\xe9 cr\xe8me" for n in range(count)]
    raw = "\n".join(lines).encode("latin-1") + b"\n\x81 only cp1251\n"
    assert len(raw) > (1 << 20)
    return [line.encode("latin-1").decode("cp1251") for line in lines] + ["Ѓ only cp1251"], raw


async def test_a_streamed_file_takes_the_fallback_that_proves_it_whole_not_its_first_chunk(
    root: Path,
) -> None:
    lines, raw = _a_then_b(80_000)
    (root / "mixed.txt").write_bytes(raw)
    async with Workspace.local(root, encoding_fallback=["cp1252", "cp1251"]) as workspace:
        session = workspace.session()
        first = await session.call("read", {"file_path": "mixed.txt", "offset": 1, "limit": 1})
        last = await session.call("read", {"file_path": "mixed.txt", "offset": 80_000})
    assert first.value is not None, first.text
    assert last.value is not None, last.text
    assert first.value["encoding"] == last.value["encoding"] == "cp1251"
    assert [line["text"] for line in first.value["lines"]] == lines[:1]
    assert [line["text"] for line in last.value["lines"]] == lines[79_999:]
    # A file no candidate proves whole is still not text.
    (root / "neither.txt").write_bytes(raw + b"\x98\x81\n")
    async with Workspace.local(root, encoding_fallback=["cp1252", "cp1251"]) as workspace:
        refused = await workspace.session().call(
            "read", {"file_path": "neither.txt", "offset": 80_001}
        )
    assert refused.code == "FS_NOT_TEXT"


async def test_a_streamed_remote_file_takes_the_fallback_that_proves_it_whole() -> None:
    import uuid

    from fsspec.implementations.memory import MemoryFileSystem

    lines, raw = _a_then_b(300_000)  # past the remote stream's 4 MiB chunk
    root = f"/enc-{uuid.uuid4().hex}"
    MemoryFileSystem().pipe(f"{root}/mixed.txt", raw)
    try:
        url = f"memory://{root}"
        async with Workspace.remote(url, encoding_fallback=["cp1252", "cp1251"]) as workspace:
            session = workspace.session()
            first = await session.call("read", {"file_path": "mixed.txt", "offset": 1, "limit": 1})
            last = await session.call("read", {"file_path": "mixed.txt", "offset": 300_000})
        assert first.value is not None, first.text
        assert last.value is not None, last.text
        assert first.value["encoding"] == last.value["encoding"] == "cp1251"
        assert [line["text"] for line in first.value["lines"]] == lines[:1]
        assert [line["text"] for line in last.value["lines"]] == lines[299_999:]
    finally:
        MemoryFileSystem().rm(root, recursive=True)


async def test_encoding_patterns_hold_relative_to_a_clients_roots_too(tmp_path: Path) -> None:
    # SPEC §10.1: with no ROOT the server serves its working directory and the client's
    # roots are the fence; a pattern is relative to each root, as the path rules are.
    served = (tmp_path / "home").resolve()
    project = served / "proj"
    (project / "legacy").mkdir(parents=True)
    (project / "legacy" / "a.txt").write_bytes("Grüße €\n".encode("cp1252"))
    async with Workspace.sandbox(served, encodings={"legacy/**": "cp1252"}) as workspace:
        session = workspace.session()
        unfenced = await session.call("read", {"file_path": "proj/legacy/a.txt"})
        assert session.set_roots([str(project)], replace=True) == (str(project),)
        fenced = await session.call("read", {"file_path": "legacy/a.txt"})
    assert unfenced.code == "FS_NOT_TEXT"  # relative to the served root: no rule matches
    assert fenced.value is not None, fenced.text
    assert fenced.value["encoding"] == "cp1252"
    assert fenced.value["lines"][0]["text"] == "Grüße €"
