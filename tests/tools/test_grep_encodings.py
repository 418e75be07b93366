"""grep over files in other encodings (SPEC §12): the decoded text of files with a rule or
a BOM is searched, and ripgrep and the pure engine give the same answer."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig

pytestmark = pytest.mark.anyio


def _tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "a.txt").write_bytes("第一行\r\n中文文本 alpha\r\n".encode("gbk"))
    big = "填充\n" * 30_000 + "中文文本 beta\n"  # streamed: past the engine's whole reads
    (root / "docs" / "deep" / "b.txt").write_bytes(big.encode("gbk"))
    (root / "utf8.md").write_text("中文文本 gamma\n", encoding="utf-8")
    (root / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + "中文文本 delta\n".encode("utf-16-le"))
    return root


async def _grep(root: Path, native: bool, encodings: Mapping[str, str] | None) -> str:
    discovery = DiscoveryConfig(native=native)
    async with Workspace.sandbox(root, discovery=discovery, encodings=encodings) as workspace:
        result = await workspace.session().call("grep", {"pattern": "中文文本 \\w+"})
    assert not result.is_error, result.text
    return result.text


async def test_grep_over_a_gbk_tree_gives_the_same_answer_through_ripgrep_and_the_pure_engine(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path)
    ripgrep = await _grep(root, True, {"docs/**": "gbk"})
    pure = await _grep(root, False, {"docs/**": "gbk"})
    assert ripgrep == pure
    for word in ("alpha", "beta", "gamma", "delta"):
        assert f"中文文本 {word}" in pure


async def test_a_utf16_file_with_a_bom_is_found_by_either_engine_without_any_rule(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path)
    ripgrep = await _grep(root, True, None)
    pure = await _grep(root, False, None)
    assert ripgrep == pure
    assert "中文文本 delta" in pure
    assert "alpha" not in pure  # GBK without a rule is not text


def _cp1252_tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "legacy" / "deep").mkdir(parents=True)
    (root / "legacy" / "a.txt").write_bytes("Größe: zehn €\r\nzweite Zeile\r\n".encode("cp1252"))
    big = "Füller\n" * 30_000 + "Größe: zwölf\n"  # streamed: past the engine's whole reads
    (root / "legacy" / "deep" / "b.txt").write_bytes(big.encode("cp1252"))
    # 0x81 is no cp1252 character: the file fails the proof and is not text to either engine.
    (root / "legacy" / "broken.txt").write_bytes(b"Gr\xf6\xdfe: kaputt \x81\n")
    (root / "legacy" / "u16.txt").write_bytes(
        codecs.BOM_UTF16_LE + "Größe: u16\n".encode("utf-16-le")
    )
    (root / "plain.md").write_text("Größe: utf8\n", encoding="utf-8")
    return root


async def test_grep_over_a_cp1252_tree_gives_the_same_answer_through_ripgrep_and_the_pure_engine(
    tmp_path: Path,
) -> None:
    root = _cp1252_tree(tmp_path)
    ripgrep = await _grep_for(root, True, {"legacy/": "cp1252"}, "Größe: \\w+")
    pure = await _grep_for(root, False, {"legacy/": "cp1252"}, "Größe: \\w+")
    assert ripgrep == pure
    for word in ("zehn", "zwölf", "u16", "utf8"):
        assert f"Größe: {word}" in pure
    assert "kaputt" not in pure


async def _grep_for(
    root: Path, native: bool, encodings: Mapping[str, str] | None, pattern: str
) -> str:
    discovery = DiscoveryConfig(native=native)
    async with Workspace.sandbox(root, discovery=discovery, encodings=encodings) as workspace:
        result = await workspace.session().call("grep", {"pattern": pattern})
    assert not result.is_error, result.text
    return result.text


def _bom_tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "legacy").mkdir()
    text = "Größe: eins\r\nGröße: zwei €\r\n"
    (root / "legacy" / "bom.txt").write_bytes(codecs.BOM_UTF8 + text.encode("cp1252"))
    (root / "legacy" / "bom_only.txt").write_bytes(codecs.BOM_UTF8 + b"\r\n")
    (root / "plain.md").write_text("Größe: utf8\n", encoding="utf-8")
    return root


async def test_a_cp1252_rule_file_that_starts_with_a_utf8_bom_gets_the_same_hits_either_way(
    tmp_path: Path,
) -> None:
    # The rule wins over a UTF-8 BOM (SPEC §12): the file's first bytes are cp1252 text too
    # ("ï»¿"), on the first line as everywhere else, through ripgrep as through the engine.
    root = _bom_tree(tmp_path)
    for pattern in ("Größe: \\w+", "^ï»¿Größe", "ï»¿", "zwei €$"):
        ripgrep = await _grep_for(root, True, {"legacy/": "cp1252"}, pattern)
        pure = await _grep_for(root, False, {"legacy/": "cp1252"}, pattern)
        assert ripgrep == pure, pattern
    found = await _grep_for(root, False, {"legacy/": "cp1252"}, "Größe: \\w+")
    assert "Größe: eins" in found
    assert "Größe: zwei" in found
    async with Workspace.sandbox(root, encodings={"legacy/": "cp1252"}) as workspace:
        read = await workspace.session().call("read", {"file_path": "legacy/bom.txt"})
    assert read.value is not None
    assert read.value["lines"][0]["text"] == "ï»¿Größe: eins"
