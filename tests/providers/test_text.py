"""What every provider calls text (`providers/_text.py`), SPEC §12 parts: the decision of a
whole file's encoding, the streaming round-trip proof, and the splice of an edit."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEncoding
from dsh_fs.providers._text import CodecDecoder, decode_file, splice

SAMPLES = {
    "gbk": "中文文本，第二行。\r\nabc 汉字\n",
    "shift_jis": "日本語のテキスト、カタカナ。\nabc\n",
    "utf-16-le": "surrogates 😀𝄞 and 中文\n",
    "utf-16-be": "surrogates 😀𝄞 and 中文\n",
    "cp1252": "Grüße – “quoted” €\r\n",
    "iso8859-1": "café ÿ\n",
}


@pytest.mark.parametrize("codec", sorted(SAMPLES))
@given(cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6))
def test_a_stream_cut_anywhere_decodes_to_the_text_and_counts_its_bytes(
    codec: str, cuts: list[int]
) -> None:
    data = SAMPLES[codec].encode(codec)
    decoder = CodecDecoder(codec, "/p")
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    text = ""
    for piece in pieces:
        before = decoder.consumed
        chunk = decoder.decode(piece)
        assert data[before:].decode(codec).startswith(chunk)  # a chunk starts where it says
        text += chunk
    text += decoder.decode(b"", final=True)
    assert (text, decoder.consumed) == (SAMPLES[codec], len(data))


def test_bytes_that_decode_but_do_not_round_trip_are_not_text() -> None:
    # cp932 decodes both 0x8790 and 0x81E0 as U+2252, and encodes it as 0x81E0 only.
    data = b"abc \x87\x90 def"
    with pytest.raises(FsError) as refused:
        CodecDecoder("cp932", "/p").decode(data, final=True)
    assert refused.value.code is FsErrorCode.NOT_TEXT
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        decode_file(data, "cp932", (), "read", "/p")
    assert CodecDecoder("cp932", "/p").decode(b"abc \x81\xe0", final=True) == "abc ≒"
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        CodecDecoder("shift_jis", "/p").decode(b"abc\x81", final=True)  # a lone lead byte
    with pytest.raises(FsError, match="binary file"):
        CodecDecoder("gbk", "/p").decode("中\0".encode("gbk"))
    with pytest.raises(FsError, match="binary file"):
        CodecDecoder("cp1252", "/p").decode(b"caf\xe9\0")


def test_a_whole_file_is_decided_bom_first_then_rule_then_utf8_then_fallbacks() -> None:
    u16 = codecs.BOM_UTF16_BE + "x".encode("utf-16-be")
    assert decode_file(u16, "cp1252", (), "read", "/p")[1] == FsEncoding(
        codec="utf-16-be", bom=True
    )
    assert decode_file("é".encode(), "cp1252", (), "read", "/p") == (
        "Ã©",
        FsEncoding(codec="cp1252"),
    )
    assert decode_file("é".encode(), None, ("cp1252",), "read", "/p")[1] == FsEncoding()
    assert decode_file(b"\xe9", None, ("gbk", "cp1252"), "read", "/p") == (
        "é",
        FsEncoding(codec="cp1252"),
    )
    with pytest.raises(FsError, match="invalid UTF-8 text"):
        decode_file(b"\xe9", "gbk", ("cp1252",), "read", "/p")


def test_a_splice_keeps_the_bytes_outside_the_changed_span() -> None:
    encoding = FsEncoding(codec="gbk")
    before = "前缀 alt 后缀\n"
    data = before.encode("gbk")
    after = before.replace("alt", "新的")
    assert splice(data, encoding, before, after, "edit", "/p", "new_string") == (
        after.encode("gbk")
    )
    with pytest.raises(FsError) as refused:
        splice(data, encoding, before, before.replace("alt", "😀"), "edit", "/p", "new_string")
    assert refused.value.message == (
        'cannot edit "/p": gbk cannot encode "😀" (U+1F600) in new_string'
    )
