"""The tools' canonical values: what a program gets beside the rendered text (SPEC §6).

Each value holds everything its rendering needs, and `to_json` gives the SPEC keys plus a
few clearly additive ones (``output_capped``, ``replacements``, ``replace_all``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_fs.fs import EncodedText

__all__ = [
    "DeleteValue",
    "EditFilesValue",
    "EditValue",
    "EditedFile",
    "ImageValue",
    "MkdirValue",
    "MoveValue",
    "ReadValue",
    "WriteValue",
]

TextLike = str | EncodedText


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageValue:
    """A successful read of an image (SPEC §10): what it is, and its bytes for adapters."""

    path: str
    """The display path."""
    mime_type: str
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp`` (by content)."""
    size: int
    """The file's size in bytes."""
    data: bytes = field(repr=False)
    """The file's bytes (at most the workspace's `max_image_bytes`); not in `to_json`."""

    def to_json(self) -> dict[str, Any]:
        """``{path, mime_type, size}``."""
        return {"path": self.path, "mime_type": self.mime_type, "size": self.size}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadValue:
    """A successful read: a window of numbered lines."""

    path: str
    """The display path."""
    offset: int
    """Number of the first line asked for (and of the first line in `lines`)."""
    lines: tuple[str, ...]
    """The lines' display texts (no line ending, long lines truncated), numbered from
    `offset`."""
    total_lines: int
    """How many lines the whole file has."""
    output_capped: bool = False
    """The 50 KiB output cap stopped the window early."""
    encoding: str = "utf-8"
    """The file's codec, Python's name (SPEC §12: ``utf-8`` for plain files)."""
    bom: bool = False
    """The file starts with a byte order mark (never shown among the lines)."""

    @property
    def last_line(self) -> int:
        """Number of the last line shown (``offset - 1`` when none is)."""
        return self.offset + len(self.lines) - 1

    def to_json(self) -> dict[str, Any]:
        """``{path, offset, lines: [{number, text}], total_lines, output_capped, encoding,
        bom}``."""
        return {
            "path": self.path,
            "offset": self.offset,
            "lines": [
                {"number": number, "text": text}
                for number, text in enumerate(self.lines, self.offset)
            ],
            "total_lines": self.total_lines,
            "output_capped": self.output_capped,
            "encoding": self.encoding,
            "bom": self.bom,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteValue:
    """A successful write."""

    path: str
    """The display path."""
    operation: Literal["create", "update"]
    """Whether the file was created or replaced."""
    before: str | None
    """The prior text; None for a create (or when the provider did not keep it)."""
    after: str
    """The text now in the file."""

    def to_json(self) -> dict[str, Any]:
        """``{path, operation, before, after}``."""
        return {
            "path": self.path,
            "operation": self.operation,
            "before": self.before,
            "after": self.after,
        }


class EditValue:
    """A successful edit (immutable).

    `before` and `after` may be given as `EncodedText` (what the provider handed over):
    they are decoded on first access, so a caller that only needs the rendered sentence
    never holds a large file's text as `str`.
    """

    __slots__ = ("_after", "_before", "path", "replace_all", "replacements")

    path: str
    """The display path."""
    replacements: int
    """How many occurrences were replaced."""
    replace_all: bool
    """Whether the call asked for every occurrence (this changes the rendered sentence)."""
    _before: TextLike
    _after: TextLike

    def __init__(
        self,
        *,
        path: str,
        before: TextLike,
        after: TextLike,
        replacements: int = 1,
        replace_all: bool = False,
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "_before", before)
        object.__setattr__(self, "_after", after)
        object.__setattr__(self, "replacements", replacements)
        object.__setattr__(self, "replace_all", replace_all)

    @property
    def before(self) -> str:
        """The text before the edit."""
        return self._before if isinstance(self._before, str) else self._before.text

    @property
    def after(self) -> str:
        """The text after the edit."""
        return self._after if isinstance(self._after, str) else self._after.text

    def to_json(self) -> dict[str, Any]:
        """``{path, before, after, replacements, replace_all}``."""
        return {
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "replacements": self.replacements,
            "replace_all": self.replace_all,
        }

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"EditValue is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EditValue):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"EditValue(path={self.path!r}, before={self._before!r}, after={self._after!r}, "
            f"replacements={self.replacements!r}, replace_all={self.replace_all!r})"
        )

    def _fields(self) -> tuple[object, ...]:
        return (self.path, self.before, self.after, self.replacements, self.replace_all)


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveValue:
    """A successful move (SPEC §10)."""

    source: str
    """The display path the entry had."""
    destination: str
    """The display path it has now."""
    type: Literal["file", "directory", "symlink"]
    """What moved (a link moves itself)."""
    replaced: bool = False
    """A file observed at the destination was replaced."""

    def to_json(self) -> dict[str, Any]:
        """``{source, destination, type, replaced}``."""
        return {
            "source": self.source,
            "destination": self.destination,
            "type": self.type,
            "replaced": self.replaced,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteValue:
    """A successful delete (SPEC §10; also the dialects' file deletes)."""

    path: str
    """The display path of what was removed."""
    type: Literal["file", "directory", "symlink"] = "file"
    """What was removed (a link itself, never what it points to)."""

    def to_json(self) -> dict[str, Any]:
        """``{path, type}``."""
        return {"path": self.path, "type": self.type}


@dataclass(frozen=True, slots=True, kw_only=True)
class MkdirValue:
    """A successful mkdir (SPEC §10)."""

    path: str
    """The directory's display path."""
    created: bool
    """False when it already existed."""

    def to_json(self) -> dict[str, Any]:
        """``{path, created}``."""
        return {"path": self.path, "created": self.created}


@dataclass(frozen=True, slots=True, kw_only=True)
class EditedFile:
    """One file of a change set, as published."""

    path: str
    """The display path."""
    before: str
    """The text before the set."""
    after: str
    """The text the set published."""
    replacements: int
    """How many occurrences the set's edits of this file replaced, together."""

    def to_json(self) -> dict[str, Any]:
        """``{path, before, after, replacements}``."""
        return {
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "replacements": self.replacements,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class EditFilesValue:
    """A successful `edit_files` (SPEC §13): every file it changed, in the order first
    named, with the set's journal group."""

    files: tuple[EditedFile, ...]
    """The files changed, in the order the edits first named them."""
    group: str | None = None
    """The set's id (each file's journal entry carries it as `group`); None when nothing
    journals."""
    outputs: tuple[str, ...] = ()
    """What each operation did, in order, in a dialect's words (``Created file <p>``,
    ``Moved file <p> to <q>``…: `patch_files`); empty for `edit_files`."""

    @property
    def replacements(self) -> int:
        """How many occurrences the set replaced, over every file."""
        return sum(file.replacements for file in self.files)

    def to_json(self) -> dict[str, Any]:
        """``{files: [{path, before, after, replacements}], replacements, group}``, and
        ``outputs`` when there are any."""
        return {
            "files": [file.to_json() for file in self.files],
            "replacements": self.replacements,
            "group": self.group,
        } | ({"outputs": list(self.outputs)} if self.outputs else {})
