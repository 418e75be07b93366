"""The byte-for-byte property of SPEC §12 on every backend: a random edit of a file in
cp1252, latin-1, Shift-JIS, GBK, UTF-16 LE/BE with a BOM or UTF-8 with a BOM changes only
the replaced span, which holds the replacement in the file's codec; a replacement the codec
cannot encode changes nothing.

The quick suite runs a few dozen edits per backend; the slow test (``make
encodings-property``, or ``-m slow``) runs 10,000 per backend, or as many as
``DSH_FS_ENCODING_EDITS`` says.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest

from .backends import ProviderUnderTest

pytestmark = pytest.mark.anyio

_ASCII = "abcxyzABC019 .,;:_-\n"


@dataclass(frozen=True)
class Codec:
    """A file encoding under test: where its files go (`backends.ENCODINGS` names the
    codec by path; a BOM needs no rule), and characters it can encode."""

    name: str
    path: str
    bom: bytes
    extra: str

    def encode(self, text: str) -> bytes:
        return text.encode(self.name)


CODECS = (
    Codec("cp1252", "legacy/p.txt", b"", "äöüßéèñ€–“”…"),
    Codec("latin-1", "p.l1", b"", "äöüßéèñ\xa0\xff¿"),
    Codec("shift_jis", "p.sjis", b"", "日本語テキストカナかな漢字"),
    Codec("gbk", "p.gbk", b"", "中文文本第二行汉字简体"),
    Codec("utf-16-le", "p-le.txt", codecs.BOM_UTF16_LE, "äö中文😀𝄞"),
    Codec("utf-16-be", "p-be.txt", codecs.BOM_UTF16_BE, "äö中文😀𝄞"),
    Codec("utf-8", "p-u8.txt", codecs.BOM_UTF8, "äö中文😀𝄞"),
)

_SLOW_EDITS = int(os.environ.get("DSH_FS_ENCODING_EDITS", "10000"))
"""How many random edits the slow test makes per backend (SPEC §12 says 10,000)."""

# Characters some codecs cannot encode: a replacement with one must change nothing.
_FOREIGN = "😀ŋ✓"


@st.composite
def edits(draw: st.DrawFn) -> tuple[Codec, str, str, str, str]:
    codec = draw(st.sampled_from(CODECS))
    alphabet = _ASCII + codec.extra
    prefix = draw(st.text(alphabet, max_size=40))
    old = draw(st.text(alphabet, min_size=1, max_size=12))
    suffix = draw(st.text(alphabet, max_size=40))
    new = draw(st.text(alphabet + _FOREIGN, max_size=12))
    return codec, prefix, old, suffix, new


async def _check(put: ProviderUnderTest, drawn: tuple[Codec, str, str, str, str]) -> None:
    codec, prefix, old, suffix, new = drawn
    text = prefix + old + suffix
    # `count` misses overlapping matches ("xx" in "xxx"): the one match must be the drawn one.
    assume(old != new and text.count(old) == 1 and text.find(old) == len(prefix))
    data = codec.bom + codec.encode(text)
    put.outside.write_bytes(codec.path, data)
    target = await put.fs.resolve(codec.path)
    try:
        expected_span = codec.encode(new)
    except UnicodeEncodeError:
        with pytest.raises(FsError) as refused:
            await put.fs.edit_text(target, FsEditRequest(old_string=old, new_string=new))
        assert refused.value.code is FsErrorCode.NOT_ENCODABLE
        assert put.outside.read_bytes(codec.path) == data
        return
    await put.fs.edit_text(target, FsEditRequest(old_string=old, new_string=new))
    after = put.outside.read_bytes(codec.path)
    assert after is not None
    start = len(codec.bom) + len(codec.encode(prefix))
    end = start + len(codec.encode(old))
    kept_tail = len(data) - end
    assert after[:start] == data[:start]
    assert after[len(after) - kept_tail :] == data[end:]
    assert after[start : len(after) - kept_tail] == expected_span


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=edits())
async def test_a_random_edit_changes_only_the_span_in_the_files_codec(
    put: ProviderUnderTest, drawn: tuple[Codec, str, str, str, str]
) -> None:
    await _check(put, drawn)


@pytest.mark.slow
# No shrinking database and no deadline: the run is long, and a failure prints its example.
@settings(
    max_examples=_SLOW_EDITS,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(drawn=edits())
async def test_ten_thousand_random_edits_change_only_their_spans(
    put: ProviderUnderTest, drawn: tuple[Codec, str, str, str, str]
) -> None:
    await _check(put, drawn)
