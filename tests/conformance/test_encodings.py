"""Files in other encodings (SPEC §12): BOMs recognised, declared codecs proven by a round
trip, edits that change only the replaced span's bytes, writes that keep codec and BOM.

Every backend is built with `backends.ENCODINGS`: ``legacy/`` is cp1252, ``*.l1`` latin-1,
``*.sjis`` Shift-JIS, ``*.gbk`` GBK, ``*.u16le`` UTF-16 LE (no BOM), ``*.u8bom`` UTF-8
with a BOM for new files.
"""

from __future__ import annotations

import codecs

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsEditRequest, FsEncoding, FsInsertRequest

from .backends import ProviderUnderTest, fails

pytestmark = pytest.mark.anyio

U16LE = codecs.BOM_UTF16_LE
U16BE = codecs.BOM_UTF16_BE
U8 = codecs.BOM_UTF8


def edit(old: str, new: str, replace_all: bool = False) -> FsEditRequest:
    return FsEditRequest(old_string=old, new_string=new, replace_all=replace_all)


@pytest.mark.parametrize(
    ("bom", "codec"), [(U16LE, "utf-16-le"), (U16BE, "utf-16-be")], ids=["le", "be"]
)
async def test_a_utf16_file_with_a_bom_reads_as_its_text_and_names_its_encoding(
    put: ProviderUnderTest, bom: bytes, codec: str
) -> None:
    put.outside.write_bytes("u.txt", bom + "héllo\r\nwörld 中\r\n".encode(codec))
    decoded = await put.fs.read_decoded(await put.fs.resolve("u.txt"))
    assert decoded.text == "\ufeffhéllo\r\nwörld 中\r\n"
    assert decoded.encoding == FsEncoding(codec=codec, bom=True)
    assert await put.fs.read_text(await put.fs.resolve("u.txt")) == decoded.text


async def test_a_utf8_file_reads_as_utf8_with_or_without_a_bom(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("b.txt", U8 + b"alpha\n")
    put.outside.write_bytes("p.txt", b"alpha\n")
    bommed = await put.fs.read_decoded(await put.fs.resolve("b.txt"))
    plain = await put.fs.read_decoded(await put.fs.resolve("p.txt"))
    assert (bommed.text, bommed.encoding) == ("\ufeffalpha\n", FsEncoding(bom=True))
    assert (plain.text, plain.encoding) == ("alpha\n", FsEncoding())


@pytest.mark.parametrize(
    ("bom", "codec"), [(U16LE, "utf-16-le"), (U16BE, "utf-16-be")], ids=["le", "be"]
)
async def test_an_edit_of_a_utf16_file_changes_only_the_replaced_span(
    put: ProviderUnderTest, bom: bytes, codec: str
) -> None:
    before = bom + "one\r\ntwo\nthree".encode(codec)
    put.outside.write_bytes("u.txt", before)
    outcome = await put.fs.edit_text(await put.fs.resolve("u.txt"), edit("two", "zwei ✓"))
    assert put.outside.read_bytes("u.txt") == bom + "one\r\nzwei ✓\nthree".encode(codec)
    assert outcome.before == "\ufeffone\r\ntwo\nthree"
    assert outcome.after == "\ufeffone\r\nzwei ✓\nthree"


async def test_an_edit_of_a_crlf_utf16_file_writes_new_lines_with_its_endings(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("u.txt", U16LE + "a\r\nb\r\nc\r\n".encode("utf-16-le"))
    await put.fs.edit_text(await put.fs.resolve("u.txt"), edit("b", "b1\nb2"))
    assert put.outside.read_bytes("u.txt") == U16LE + "a\r\nb1\r\nb2\r\nc\r\n".encode("utf-16-le")


async def test_an_insert_into_a_utf16_file_keeps_every_other_byte(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("u.txt", U16BE + "a\nc\n".encode("utf-16-be"))
    await put.fs.edit_text(await put.fs.resolve("u.txt"), FsInsertRequest(line=1, text="b"))
    assert put.outside.read_bytes("u.txt") == U16BE + "a\nb\nc\n".encode("utf-16-be")


@pytest.mark.parametrize(
    ("rel", "bom", "codec"),
    [("u.txt", U16LE, "utf-16-le"), ("v.txt", U16BE, "utf-16-be"), ("w.txt", U8, "utf-8")],
)
async def test_a_write_over_a_file_with_a_bom_keeps_its_codec_and_bom(
    put: ProviderUnderTest, rel: str, bom: bytes, codec: str
) -> None:
    put.outside.write_bytes(rel, bom + "old\n".encode(codec))
    target = await put.fs.resolve(rel)
    outcome = await put.fs.write_text(target, "new ü\n")
    assert put.outside.read_bytes(rel) == bom + "new ü\n".encode(codec)
    assert outcome.operation == "update"
    assert outcome.before == "\ufeffold\n"
    decoded = await put.fs.read_decoded(target)
    assert decoded.encoding == FsEncoding(codec=codec, bom=True)


async def test_an_edit_the_codec_cannot_encode_is_refused_and_nothing_changes(
    put: ProviderUnderTest,
) -> None:
    data = "café\r\n".encode("cp1252")
    put.outside.write_bytes("legacy/a.txt", data)
    message = (
        f'cannot edit "{put.display("legacy/a.txt")}": cp1252 cannot encode "😀" (U+1F600) '
        "in new_string"
    )
    with fails(FsErrorCode.NOT_ENCODABLE, message):
        await put.fs.edit_text(await put.fs.resolve("legacy/a.txt"), edit("café", "caf😀"))
    assert put.outside.read_bytes("legacy/a.txt") == data


async def test_a_write_the_codec_cannot_encode_is_refused_and_nothing_changes(
    put: ProviderUnderTest,
) -> None:
    data = "café\n".encode("cp1252")
    put.outside.write_bytes("legacy/a.txt", data)
    message = (
        f'cannot write "{put.display("legacy/a.txt")}": cp1252 cannot encode "中" (U+4E2D) '
        "in content"
    )
    with fails(FsErrorCode.NOT_ENCODABLE, message):
        await put.fs.write_text(await put.fs.resolve("legacy/a.txt"), "中\n")
    assert put.outside.read_bytes("legacy/a.txt") == data


@pytest.mark.parametrize(
    ("rel", "codec", "text", "new"),
    [
        ("legacy/deep/a.txt", "cp1252", "Grüße – “quoted” €5\r\nzweite Zeile\r\n", "Ä"),
        ("a.l1", "iso8859-1", "café\x85 ÿ\nline two\n", "Ä"),
        ("a.sjis", "shift_jis", "日本語のテキスト\nカタカナ\n", "漢字"),
        ("a.gbk", "gbk", "中文文本\r\n第二行\r\n", "汉字"),
        ("a.u16le", "utf-16-le", "no BOM here\nzweite\n", "Ä😀"),
    ],
    ids=["cp1252", "latin-1", "shift_jis", "gbk", "utf-16-le"],
)
async def test_a_declared_codec_reads_and_edits_byte_for_byte(
    put: ProviderUnderTest, rel: str, codec: str, text: str, new: str
) -> None:
    data = text.encode(codec)
    put.outside.write_bytes(rel, data)
    target = await put.fs.resolve(rel)
    decoded = await put.fs.read_decoded(target)
    assert (decoded.text, decoded.encoding) == (text, FsEncoding(codec=codec))
    first = text.split("\n")[0].rstrip("\r")
    word = first[1:4]
    await put.fs.edit_text(target, edit(word, new))
    assert put.outside.read_bytes(rel) == text.replace(word, new, 1).encode(codec)


async def test_a_new_file_gets_its_rules_codec(put: ProviderUnderTest) -> None:
    await put.fs.write_text(await put.fs.resolve("legacy/new.txt"), "naïve\n")
    await put.fs.write_text(await put.fs.resolve("n.u8bom"), "x\n")
    await put.fs.write_text(await put.fs.resolve("plain.txt"), "naïve\n")
    assert put.outside.read_bytes("legacy/new.txt") == "naïve\n".encode("cp1252")
    assert put.outside.read_bytes("n.u8bom") == U8 + b"x\n"
    assert put.outside.read_bytes("plain.txt") == "naïve\n".encode()


async def test_a_file_that_fails_the_round_trip_proof_is_not_text(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("legacy/bad.txt", b"undefined in cp1252: \x81\n")
    put.outside.write_bytes("bad.gbk", b"\x81\n")
    put.outside.write_bytes("nul.gbk", b"a\x00b\n")
    for rel, what in (("legacy/bad.txt", "invalid UTF-8 text"), ("bad.gbk", "invalid UTF-8 text")):
        with fails(FsErrorCode.NOT_TEXT, f'cannot read "{put.display(rel)}": {what}'):
            await put.fs.read_text(await put.fs.resolve(rel))
    with fails(FsErrorCode.NOT_TEXT, f'cannot read "{put.display("nul.gbk")}": binary file'):
        await put.fs.read_text(await put.fs.resolve("nul.gbk"))
    with fails(FsErrorCode.NOT_TEXT):
        await put.fs.edit_text(await put.fs.resolve("legacy/bad.txt"), edit("in", "out"))
    assert put.outside.read_bytes("legacy/bad.txt") == b"undefined in cp1252: \x81\n"


async def test_a_file_no_rule_or_bom_covers_stays_refused_when_it_is_not_utf8(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("l.txt", "café\n".encode("cp1252"))
    message = f'cannot read "{put.display("l.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await put.fs.read_text(await put.fs.resolve("l.txt"))


async def test_a_stream_decodes_in_the_files_codec_and_resumes_at_its_offsets(
    put: ProviderUnderTest,
) -> None:
    line = "第{:06d}行 中文文本 — GBK\n"
    text = "".join(line.format(n) for n in range(12_000))  # about 330 KB: several chunks
    data = text.encode("gbk")
    put.outside.write_bytes("big.gbk", data)
    target = await put.fs.resolve("big.gbk")
    chunks = []
    async with put.fs.stream_text_from(target) as stream:
        async for chunk in stream:
            chunks.append(chunk)
        assert stream.encoding == FsEncoding(codec="gbk")
    assert "".join(c.text for c in chunks) == text
    for chunk in chunks:
        assert data[chunk.offset :].decode("gbk").startswith(chunk.text)
    last = chunks[-1]
    async with put.fs.stream_text_from(target, last.offset) as stream:
        resumed = "".join([c.text async for c in stream])
        assert stream.encoding == FsEncoding(codec="gbk")
    assert resumed == data[last.offset :].decode("gbk")
    async with put.fs.stream_text(target) as plain:
        assert "".join([c async for c in plain]) == text


async def test_a_utf16_stream_past_its_start_knows_the_bom(put: ProviderUnderTest) -> None:
    text = "".join(f"Zeile {n} – ü\n" for n in range(20_000))
    put.outside.write_bytes("u.txt", U16BE + text.encode("utf-16-be"))
    target = await put.fs.resolve("u.txt")
    async with put.fs.stream_text_from(target) as stream:
        chunks = [c async for c in stream]
    assert "".join(c.text for c in chunks) == "\ufeff" + text
    async with put.fs.stream_text_from(target, chunks[-1].offset) as stream:
        tail = "".join([c.text async for c in stream])
        assert stream.encoding == FsEncoding(codec="utf-16-be", bom=True)
    assert tail == chunks[-1].text
