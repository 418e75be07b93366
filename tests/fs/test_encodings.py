"""`EncodingRules` and codec names (SPEC §12): pure, no file is read."""

from __future__ import annotations

import pytest

from dsh_fs.fs import EncodingRules, Encodings, FsEncoding, bom_encoding, canonical_codec


def rules(*pairs: tuple[str, str], fallback: tuple[str, ...] = ()) -> EncodingRules:
    return EncodingRules.compile(Encodings(rules=pairs, fallback=fallback), ["/w", "/x/"])


def test_the_last_matching_pattern_names_the_codec() -> None:
    compiled = rules(("legacy/**", "cp1252"), ("*.txt", "gbk"), ("legacy/keep.txt", "latin1"))
    assert compiled.codec_for(["/w/legacy/a.py"]) == "cp1252"
    assert compiled.codec_for(["/w/legacy/a.txt"]) == "gbk"
    assert compiled.codec_for(["/w/legacy/keep.txt"]) == "iso8859-1"
    assert compiled.codec_for(["/x/deep/b.txt"]) == "gbk"
    assert compiled.codec_for(["/w/a.py", "/elsewhere/a.txt"]) is None


def test_a_directory_pattern_covers_its_files_and_a_negation_removes_the_rule() -> None:
    compiled = rules(("legacy/", "cp1252"), ("!legacy/new/", "cp1252"))
    assert compiled.codec_for(["/w/legacy/deep/a.c"]) == "cp1252"
    assert compiled.codec_for(["/w/legacy/new/a.c"]) is None


def test_codec_names_are_pythons_canonical_ones() -> None:
    assert [canonical_codec(n) for n in ("latin1", "CP1252", "sjis", "utf_16le")] == [
        "iso8859-1",
        "cp1252",
        "shift_jis",
        "utf-16-le",
    ]
    assert rules(fallback=("latin-1", "GBK")).fallback == ("iso8859-1", "gbk")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("klingon", "unknown encoding 'klingon'"),
        ("rot13", "encoding 'rot13' is not a text encoding"),
        ("utf-16", "encoding 'utf-16' cannot be edited span by span"),
        ("iso2022_jp", "encoding 'iso2022_jp' cannot be edited span by span"),
    ],
)
def test_an_unusable_codec_is_refused_by_name(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules(("*.txt", name))


def test_only_utf8_and_utf16_byte_order_marks_are_recognised() -> None:
    assert bom_encoding(b"\xef\xbb\xbfx") == FsEncoding(bom=True)
    assert bom_encoding(b"\xff\xfex\x00") == FsEncoding(codec="utf-16-le", bom=True)
    assert bom_encoding(b"\xfe\xff\x00x") == FsEncoding(codec="utf-16-be", bom=True)
    assert bom_encoding(b"plain") is None


def test_editorconfig_section_globs_match_as_editorconfig_reads_them() -> None:
    from dsh_fs.providers.local._editorconfig import parse

    root, sections = parse(
        "root = true\n[*.py]\ncharset = latin1\n[lib/**]\ncharset = utf-16be\n"
        "[{a,b}.c]\ncharset = utf-8-bom\n[f{1..3}.txt]\ncharset = unset\n[*.md]\nindent = 2\n"
    )
    assert root
    found = {
        path: [charset for pattern, charset in sections if pattern.fullmatch(path)]
        for path in ("x.py", "deep/x.py", "lib/a/b.txt", "b.c", "f2.txt", "f4.txt", "r.md")
    }
    assert found == {
        "x.py": ["iso8859-1"],
        "deep/x.py": ["iso8859-1"],
        "lib/a/b.txt": ["utf-16-be"],
        "b.c": ["utf-8-sig"],
        "f2.txt": [None],
        "f4.txt": [],
        "r.md": [],
    }
