"""Files in other encodings (SPEC §12): a file's encoding, and the rules that declare one.

`FsEncoding` names how a file's bytes are text: a Python codec applied to the whole file,
and whether it starts with a byte order mark (kept in the decoded text as U+FEFF, as a
UTF-8 BOM always was, so windows hide it and edits keep it). `Encodings` is what a caller
writes (gitignore patterns relative to each root → codec, and fallback codecs);
`EncodingRules` is it compiled against the roots, pure like `PathRules`: a provider is given
one at construction and asks it which codec a path declares. Nothing here reads a file.
"""

from __future__ import annotations

import codecs
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = [
    "UTF8",
    "EncodingRules",
    "Encodings",
    "FsDecoded",
    "FsEncoding",
    "bom_encoding",
    "canonical_codec",
    "journal_codec",
    "proven_text",
    "transcoded_utf8",
    "utf16_as_utf8",
]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Codecs a rule may not name: their encoder keeps state across the text (an escape
# sequence's mode, a BOM written once), so one span of the text has no encoding of its own
# and an edit could not change only its bytes.
_STATEFUL = frozenset(
    {"utf-16", "utf-32", "utf-7", "hz", "iso2022_jp", "iso2022_kr"}
    | {f"iso2022_jp_{suffix}" for suffix in ("1", "2", "2004", "3", "ext")}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FsEncoding:
    """How a file's bytes are its text."""

    codec: str = "utf-8"
    """Python's canonical codec name (``utf-8``, ``utf-16-le``, ``cp1252``, ``gbk``…)."""
    bom: bool = False
    """The file starts with a byte order mark (its text with U+FEFF)."""

    @property
    def utf8(self) -> bool:
        """UTF-8, with or without a BOM: the text paths every provider had before §12."""
        return self.codec == "utf-8"


UTF8 = FsEncoding()
"""Plain UTF-8 without a BOM: every file no BOM or rule says otherwise of."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsDecoded:
    """A file's whole text and the encoding it was read in (`FileSystem.read_decoded`)."""

    text: str
    """The decoded text (a BOM kept as a leading U+FEFF)."""
    encoding: FsEncoding
    """The encoding that decoded it, proven to reproduce the file's bytes."""


def bom_encoding(head: bytes | bytearray | memoryview) -> FsEncoding | None:
    """The encoding the byte order mark at the start of `head` names, if any (UTF-8, UTF-16
    LE or BE)."""
    start = bytes(head[:3])
    for mark, codec in _BOMS:
        if start.startswith(mark):
            return FsEncoding(codec=codec, bom=True)
    return None


def proven_text(data: bytes | bytearray, codec: str) -> str | None:
    """The text of `data` in `codec` if that is the proof of SPEC §12 (it decodes strictly,
    has no U+0000, and encodes back to exactly `data`), else None."""
    try:
        text = codecs.decode(data, codec)
    except UnicodeDecodeError:
        return None
    if "\0" in text:
        return None
    try:
        again = text.encode(codec)
    except UnicodeEncodeError:
        return None
    return text if again == data else None


def utf16_as_utf8(data: bytes | None) -> bytes | None:
    """`data` as UTF-8 when it is text with a UTF-16 BOM (the BOM kept, as U+FEFF in
    UTF-8), else `data` itself: what a consumer of UTF-8 bytes (the journal's diffs and
    counts) is given for a UTF-16 file."""
    if data is None:
        return None
    bom = bom_encoding(data)
    if bom is None or bom.utf8:
        return data
    text = proven_text(data, bom.codec)
    return data if text is None else text.encode("utf-8")


def transcoded_utf8(data: bytes | None, codec: str | None) -> bytes | None:
    """`data` as UTF-8 for a consumer of UTF-8 bytes (the journal's diffs, line counts and
    forward deltas): its text in `codec` (the codec the journal recorded for the file when
    the change was made) when it round-trips through it, else as `utf16_as_utf8` gives it.
    A side that is not text in `codec` stays as it is (and is then not UTF-8 text either)."""
    if data is None or codec is None or codec == "utf-8":
        return utf16_as_utf8(data)
    text = proven_text(data, codec)
    return data if text is None else text.encode("utf-8")


def journal_codec(encoding: FsEncoding | None) -> str | None:
    """The codec the journal records for a change of a file in `encoding` (SPEC §12): its
    name when the file is not UTF-8, else None (a UTF-8 file, with or without a BOM, needs
    none)."""
    return None if encoding is None or encoding.utf8 else encoding.codec


def canonical_codec(name: str) -> str:
    """Python's canonical name of the codec `name` names (``latin1`` → ``iso8859-1``).

    Raises:
        ValueError: no such codec, not a text codec, or one whose encoding of a span depends
            on the text around it (the message names it).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"unknown encoding {name!r}")
    try:
        info = codecs.lookup(name.strip())
    except LookupError:
        raise ValueError(f"unknown encoding {name!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"encoding {name!r} is not a text encoding")
    canonical = info.name
    if canonical in _STATEFUL:
        hint = " (name utf-16-le or utf-16-be)" if canonical.startswith("utf-") else ""
        raise ValueError(
            f"encoding {name!r} cannot be edited span by span: its encoder keeps state{hint}"
        )
    return canonical


@dataclass(frozen=True, slots=True, kw_only=True)
class Encodings:
    """The encodings an operator declares (SPEC §12).

    `rules` maps gitignore patterns, relative to each root, to codec names; the last
    pattern that matches a path wins. `fallback` names codecs to try, in order, for a file
    that is not valid UTF-8 and that no rule or BOM covers. `editorconfig`: honour
    ``charset`` in ``.editorconfig`` files under the roots (a rule given here wins).
    """

    rules: Sequence[tuple[str, str]] | Mapping[str, str] = ()
    """``(pattern, codec)`` pairs in order, or a mapping (its order)."""
    fallback: Sequence[str] = ()
    """Codecs for files that are not UTF-8 and have no rule."""
    editorconfig: bool = True
    """Read ``charset`` from ``.editorconfig`` files under the roots."""


@dataclass(frozen=True, slots=True)
class EncodingRules:
    """`Encodings` compiled against the roots their patterns are relative to."""

    roots: tuple[str, ...]
    """Absolute root paths (or URLs), without a trailing separator."""
    patterns: tuple[tuple[str, str, GitIgnoreSpecPattern], ...] = field(repr=False)
    """``(pattern, codec, compiled)`` in the order given."""
    fallback: tuple[str, ...]
    """Canonical codec names to try for files that are not UTF-8 and have no rule."""
    editorconfig: bool = True
    """Whether ``.editorconfig`` ``charset`` counts."""

    @classmethod
    def compile(cls, encodings: Encodings, roots: Iterable[str]) -> EncodingRules:
        """Parse every pattern and check every codec.

        Raises:
            ValueError: an unknown or unusable codec, or a pattern gitignore syntax cannot
                parse (the message names it).
        """
        from pathspec.patterns.gitignore import GitIgnorePatternError
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        pairs = (
            list(encodings.rules.items())
            if isinstance(encodings.rules, Mapping)
            else list(encodings.rules)
        )
        compiled = []
        for pattern, codec in pairs:
            if not isinstance(pattern, str) or not pattern.strip() or "\0" in pattern:
                raise ValueError(f"invalid encoding pattern {pattern!r}")
            name = canonical_codec(codec)
            try:
                compiled.append((pattern, name, GitIgnoreSpecPattern(pattern)))
            except (GitIgnorePatternError, ValueError, TypeError) as exc:
                raise ValueError(f"invalid encoding pattern {pattern!r}: {exc}") from exc
        fallback = tuple(canonical_codec(codec) for codec in encodings.fallback)
        return cls(
            roots=tuple(_strip(root) for root in roots),
            patterns=tuple(compiled),
            fallback=fallback,
            editorconfig=encodings.editorconfig,
        )

    def with_roots(self, roots: Iterable[str]) -> EncodingRules:
        """The same rules relative to `roots` as well (SPEC §10.1: an MCP client's roots
        fence a session in; its patterns hold relative to each of them, as the path rules'
        do). The roots given first win where a path lies below several."""
        return dataclasses.replace(
            self, roots=tuple(dict.fromkeys(_strip(root) for root in (*roots, *self.roots)))
        )

    @property
    def empty(self) -> bool:
        """No rule, no fallback, no ``.editorconfig``: every file is UTF-8 unless its BOM
        says otherwise."""
        return not self.patterns and not self.fallback and not self.editorconfig

    def codec_for(self, paths: Iterable[str]) -> str | None:
        """The codec the last matching pattern names for any of `paths` (the path as
        spelled, its real path), or None when no pattern matches."""
        if not self.patterns:
            return None
        for relative in dict.fromkeys(rel for path in paths for rel in self._relatives(path)):
            found = None
            for _, codec, compiled in self.patterns:
                if compiled.include is None:
                    continue
                if _matches(compiled, relative):
                    found = codec if compiled.include else None
            if found is not None:
                return found
        return None

    def root_of(self, path: str) -> str | None:
        """The root `path` lies below (the deepest one), if any."""
        path = _strip(path)
        best = None
        for root in self.roots:
            prefix = root if root.endswith("/") else root + "/"
            if path.startswith(prefix) and (best is None or len(root) > len(best)):
                best = root
        return best

    def _relatives(self, path: str) -> list[str]:
        path = _strip(path)
        found = []
        for root in self.roots:
            prefix = root if root.endswith("/") else root + "/"
            if path != root and path.startswith(prefix):
                found.append(path[len(prefix) :])
        return found


def _matches(pattern: GitIgnoreSpecPattern, relative: str) -> bool:
    """Like git: the path itself, or a directory above it (``legacy/`` covers its files)."""
    if pattern.match_file(relative) is not None:
        return True
    parts = relative.split("/")
    return any(
        pattern.match_file("/".join(parts[:depth]) + "/") is not None
        for depth in range(1, len(parts))
    )


def _strip(path: str) -> str:
    return path.rstrip("/") if path.rstrip("/") else path
