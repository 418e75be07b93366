"""ripgrep's own ``--encoding`` over files in declared encodings (SPEC §12): one run per
declared codec ripgrep decodes exactly as Python, each file's hits from its own codec's
run only; fallback codecs, other codecs and ``.editorconfig`` files leave grep to the pure
engine."""

from __future__ import annotations

import codecs
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from dsh_fs.fs import EncodingRules, Encodings, FsGrepHit, FsGrepQuery, NativeSearchAbandoned
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._ripgrep import RG_ENCODINGS, find_rg

pytestmark = pytest.mark.anyio


def _provider(
    root: Path, rules: Mapping[str, str], fallback: Sequence[str] = (), editorconfig: bool = True
) -> LocalFileSystem:
    encodings = Encodings(rules=rules, fallback=fallback, editorconfig=editorconfig)
    return LocalFileSystem(root, encodings=EncodingRules.compile(encodings, [str(root)]))


async def _hits(fs: LocalFileSystem, pattern: str) -> list[tuple[str, int, str]]:
    target = await fs.resolve(".")
    grep = fs.native_grep(target, FsGrepQuery(pattern=pattern))
    assert grep is not None
    async with grep as batches:
        found = [
            (hit.path, hit.line_number, hit.line.decode("utf-8"))
            async for batch in batches
            for hit in batch
        ]
    return sorted(found)


async def _drained(
    grep: AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]],
) -> None:
    async with grep as batches:
        async for _ in batches:
            pass


def _proven_characters(codec: str) -> list[tuple[bytes, str]]:
    """Every one- and two-byte sequence that is one character in `codec` and encodes back
    to itself (no line breaks)."""
    found = []
    for first in range(0x20, 0x100):
        seconds = [None, *range(0x30, 0x100)] if first >= 0x80 else [None]
        for second in seconds:
            data = bytes([first]) if second is None else bytes([first, second])
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                continue
            if len(text) == 1 and text not in "\r\n" and text.encode(codec) == data:
                found.append((data, text))
    return found


@pytest.mark.skipif(find_rg() is None, reason="no ripgrep wheel")
@pytest.mark.parametrize("codec", sorted(RG_ENCODINGS))
def test_ripgrep_decodes_every_character_of_a_codec_it_is_trusted_with_as_python_does(
    codec: str,
) -> None:
    binary = find_rg()
    assert binary is not None
    characters = _proven_characters(codec)
    data = b"\n".join(raw for raw, _ in characters) + b"\n"
    argv = [binary, "--no-config", "--passthru", "--no-line-number"]
    argv += [f"--encoding={RG_ENCODINGS[codec]}", "", "-"]
    shown = subprocess.run(argv, input=data, capture_output=True, check=True).stdout
    assert shown.decode("utf-8").split("\n")[:-1] == [text for _, text in characters]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "root"
    (root / "legacy" / "deep").mkdir(parents=True)
    (root / "zh").mkdir()
    (root / "legacy" / "a.txt").write_bytes("Größe: 10 €\r\nzweite Zeile\r\n".encode("cp1252"))
    (root / "legacy" / "deep" / "b.txt").write_bytes(
        ("x\n" * 5000 + "Größe: 12 €\n").encode("cp1252")
    )
    # Not cp1252 by the proof (0x81 is undefined): not text, as a read finds it.
    (root / "legacy" / "broken.txt").write_bytes(b"Gr\xf6\xdfe: \x81\n")
    (root / "legacy" / "u16.txt").write_bytes("Größe: utf-16\n".encode("utf-16"))
    (root / "zh" / "c.txt").write_bytes("第一行\n大小：中文\n".encode("gbk"))
    (root / "zh" / "notes.md").write_text("大小 in UTF-8, no rule\n", encoding="utf-8")
    (root / "plain.txt").write_text("Größe: utf-8\n", encoding="utf-8")
    return root


async def test_files_in_declared_codecs_are_searched_by_ripgrep_each_in_its_own_codec(
    tree: Path,
) -> None:
    fs = _provider(tree, {"legacy/": "cp1252", "zh/*.txt": "gbk"})
    assert await _hits(fs, "Größe: \\S+") == [
        ("legacy/a.txt", 1, "Größe: 10 €"),
        ("legacy/deep/b.txt", 5001, "Größe: 12 €"),
        ("legacy/u16.txt", 1, "Größe: utf-16"),
        ("plain.txt", 1, "Größe: utf-8"),
    ]
    assert await _hits(fs, "大小\\S*") == [
        ("zh/c.txt", 2, "大小：中文"),
        ("zh/notes.md", 1, "大小 in UTF-8, no rule"),
    ]


async def test_a_rule_declaring_utf8_keeps_its_files_in_the_usual_run(tree: Path) -> None:
    fs = _provider(tree, {"legacy/": "cp1252", "legacy/deep/": "utf-8"})
    assert await _hits(fs, "Größe: \\S+") == [
        ("legacy/a.txt", 1, "Größe: 10 €"),
        ("legacy/u16.txt", 1, "Größe: utf-16"),
        ("plain.txt", 1, "Größe: utf-8"),
    ]


async def test_fallback_codecs_or_a_codec_ripgrep_is_not_trusted_with_leave_grep_to_the_tools(
    tree: Path,
) -> None:
    target = await _provider(tree, {}).resolve(".")
    query = FsGrepQuery(pattern="x")
    assert (
        _provider(tree, {"legacy/": "cp1252"}, fallback=["gbk"]).native_grep(target, query) is None
    )
    assert _provider(tree, {"legacy/": "shift_jis"}).native_grep(target, query) is None
    assert _provider(tree, {"legacy/": "latin-1"}).native_grep(target, query) is None
    assert _provider(tree, {"legacy/": "cp1252"}).native_grep(target, query) is not None


async def test_an_editorconfig_below_the_root_abandons_ripgrep_for_the_pure_engine(
    tree: Path,
) -> None:
    (tree / "zh" / ".editorconfig").write_text("[*.md]\ncharset = latin1\n")
    with pytest.raises(NativeSearchAbandoned):
        await _hits(_provider(tree, {"legacy/": "cp1252"}), "Größe")
    # Where .editorconfig files don't count, ripgrep searches.
    found = await _hits(_provider(tree, {"legacy/": "cp1252"}, editorconfig=False), "Größe")
    assert ("legacy/a.txt", 1, "Größe: 10 €") in found


async def test_a_search_below_the_root_sees_an_editorconfig_between_them(tree: Path) -> None:
    (tree / ".editorconfig").write_text("[*.txt]\ncharset = latin1\n")
    fs = _provider(tree, {"legacy/": "cp1252"})
    target = await fs.resolve("legacy/deep")
    grep = fs.native_grep(target, FsGrepQuery(pattern="Größe"))
    assert grep is not None
    with pytest.raises(NativeSearchAbandoned):
        await _drained(grep)
    assert codecs.lookup("latin1").name not in RG_ENCODINGS
