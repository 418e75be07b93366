"""The edits `edit_text` applies: a literal replacement, an insert after a line, or a patch.

Every provider calls `apply_change` on the text it read inside its critical section, so the
three kinds share one version check and one atomic publication. Inserts and patches work on
lines the way `read` shows them: split on LF, a CR before it belongs to the line ending, and
matching compares the text without endings. What they add takes the file's dominant line
ending; every line they keep, and every byte outside the lines they touch, stays as it was
(a BOM, mixed endings, a missing final newline).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from . import messages
from ._edit import apply_edit, dominant_line_ending, safely_diagnosed
from ._types import FsEdit, FsEditRequest, FsInsertRequest, FsPatchHunk, FsPatchRequest

__all__ = ["apply_change"]

_BOM = "\ufeff"


def apply_change(text: str, change: FsEdit, display_path: str) -> tuple[str, int]:
    """Apply `change` to `text`; returns the new text and a count (replacements for a literal
    edit, 1 for an insert, the number of hunks for a patch).

    Raises:
        FsError: `FS_EDIT_NOT_FOUND` or `FS_AMBIGUOUS_EDIT` for a literal edit or a hunk that
            does not match, `FS_NOT_FOUND` for an insert after a line the file lacks.
    """
    if isinstance(change, FsEditRequest):
        return apply_edit(text, change, display_path)
    bom = _BOM if text.startswith(_BOM) else ""
    lines = _split(text[len(bom) :])
    eol = dominant_line_ending(text)
    if isinstance(change, FsInsertRequest):
        return bom + _join(_insert(lines, change, eol, display_path)), 1
    return bom + _join(_patch(lines, change, eol, display_path)), len(change.hunks)


@dataclass(slots=True)
class _Line:
    """One line: its text as `read` shows it, and the ending that follows it."""

    text: str
    end: str
    """``\\n``, ``\\r\\n``, or empty for a last line without a newline (a lone final CR
    is kept here too, so it survives)."""

    @property
    def open(self) -> bool:
        """The line has no newline after it (only ever the file's last line)."""
        return not self.end.endswith("\n")


def _split(body: str) -> list[_Line]:
    parts = body.split("\n")
    lines = [
        _Line(part[:-1], "\r\n") if part.endswith("\r") else _Line(part, "\n")
        for part in parts[:-1]
    ]
    last = parts[-1]
    if last:
        lines.append(_Line(last[:-1], "\r") if last.endswith("\r") else _Line(last, ""))
    return lines


def _join(lines: list[_Line]) -> str:
    return "".join(line.text + line.end for line in lines)


class _Output:
    """The new file, line by line: a line added after an open last line closes it first."""

    def __init__(self, eol: str) -> None:
        self.lines: list[_Line] = []
        self.eol = eol

    def keep(self, line: _Line) -> None:
        self._close_last()
        self.lines.append(_Line(line.text, line.end))

    def add(self, text: str) -> None:
        self._close_last()
        self.lines.append(_Line(text, self.eol))

    def end_open(self) -> None:
        """The file had no final newline and its last line was changed: keep it so."""
        if self.lines:
            self.lines[-1].end = ""

    def _close_last(self) -> None:
        if self.lines and self.lines[-1].open:
            self.lines[-1].end = self.eol


def _insert(lines: list[_Line], change: FsInsertRequest, eol: str, display: str) -> list[_Line]:
    if not 0 <= change.line <= len(lines):
        raise messages.insert_out_of_range(display, change.line, len(lines))
    out = _Output(eol)
    for line in lines[: change.line]:
        out.keep(line)
    for text in change.text.replace("\r\n", "\n").split("\n"):
        out.add(text)
    for line in lines[change.line :]:
        out.keep(line)
    if change.line == len(lines) and lines and lines[-1].open:
        out.end_open()
    return out.lines


def _patch(lines: list[_Line], change: FsPatchRequest, eol: str, display: str) -> list[_Line]:
    texts = _Texts([line.text for line in lines])
    out = _Output(eol)
    cursor = 0
    for number, hunk in enumerate(change.hunks, 1):
        start = _locate(texts, hunk, cursor, number, display)
        for line in lines[cursor:start]:
            out.keep(line)
        cursor = start
        for op, text in hunk.lines:
            if op == " ":
                out.keep(lines[cursor])
                cursor += 1
            elif op == "-":
                cursor += 1
            else:
                out.add(text)
    touched_end = cursor == len(lines)
    for line in lines[cursor:]:
        out.keep(line)
    if touched_end and lines and lines[-1].open:
        out.end_open()
    return out.lines


class _Texts:
    """The file's line texts, indexed once so that locating every hunk of a patch costs
    time near-linear in the file and the patch together (a scan per hunk made 4,000 hunks
    on 100,000 lines take over half a minute inside the critical section).

    Lines are interned to small integers; a block is found by Knuth-Morris-Pratt over them
    from the cursor, which only moves forward, and an anchor through the sorted positions
    of each text (exact, and with surrounding white space set aside).
    """

    __slots__ = ("_bare", "_exact", "_table", "ids", "texts")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        table: dict[str, int] = {}
        self.ids = [table.setdefault(text, len(table)) for text in texts]
        self._exact: dict[str, list[int]] = {}
        self._bare: dict[str, list[int]] = {}
        for index, text in enumerate(texts):
            self._exact.setdefault(text, []).append(index)
            self._bare.setdefault(text.strip(), []).append(index)
        self._table = table

    def __len__(self) -> int:
        return len(self.texts)

    def anchor_before(self, anchor: str, position: int) -> bool:
        """Whether a line before `position` is `anchor`, exactly or set aside white space."""
        exact = self._exact.get(anchor)
        bare = self._bare.get(anchor.strip())
        return bool((exact and exact[0] < position) or (bare and bare[0] < position))

    def find_anchor(self, anchor: str, start: int) -> int | None:
        """The first line at or after `start` equal to `anchor`, else the first equal to it
        with surrounding white space set aside on both sides."""
        for positions in (self._exact.get(anchor), self._bare.get(anchor.strip())):
            if positions:
                at = bisect_left(positions, start)
                if at < len(positions):
                    return positions[at]
        return None

    def find(self, block: list[str], start: int) -> int | None:
        """The first index at or after `start` where `block` occurs line for line."""
        pattern: list[int] = []
        for text in block:
            found = self._table.get(text)
            if found is None:
                return None  # a line the file does not have
            pattern.append(found)
        failure = _failure(pattern)
        matched = 0
        ids = self.ids
        for index in range(start, len(ids)):
            while matched and ids[index] != pattern[matched]:
                matched = failure[matched - 1]
            if ids[index] == pattern[matched]:
                matched += 1
                if matched == len(pattern):
                    return index - matched + 1
        return None


def _failure(pattern: list[int]) -> list[int]:
    """Knuth-Morris-Pratt: for each prefix, the longest proper prefix that is also a suffix."""
    failure = [0] * len(pattern)
    length = 0
    for index in range(1, len(pattern)):
        while length and pattern[index] != pattern[length]:
            length = failure[length - 1]
        if pattern[index] == pattern[length]:
            length += 1
        failure[index] = length
    return failure


def _locate(texts: _Texts, hunk: FsPatchHunk, cursor: int, number: int, display: str) -> int:
    """Where the hunk's old lines start: after its anchors, at the first exact match.

    Anchors name lines (a class, a function): one matches a line equal to it, else a line
    equal to it once surrounding white space is set aside on both sides. A hunk's first
    anchor already passed (a second hunk in the same function) leaves the position alone.
    The old lines themselves must match exactly. A hunk that only adds lines goes right
    after its anchors, or after the previous hunk.
    """
    position = cursor
    for index, anchor in enumerate(hunk.anchors):
        if index == 0 and texts.anchor_before(anchor, position):
            continue
        found = texts.find_anchor(anchor, position)
        if found is None:
            raise _miss(texts.texts, [anchor], number, display)
        position = found + 1
    old = [text for op, text in hunk.lines if op != "+"]
    if hunk.at_end:
        start = len(texts) - len(old)
        if start < position or texts.texts[start:] != old:
            raise _miss(texts.texts, old, number, display)
        return start
    if not old:
        return position
    found = texts.find(old, position)
    if found is None:
        raise _miss(texts.texts, old, number, display)
    return found


def _miss(texts: list[str], expected: list[str], number: int, display: str) -> Exception:
    """The error for a hunk that does not match, with the diagnosis an edit's miss gets
    (SPEC §8.2): the closest lines to the ones the hunk `expected`, and what differs."""
    from .diagnosis import diagnose_block  # on the first miss, not at start-up (see _edit)

    diagnosis = safely_diagnosed(
        lambda: diagnose_block("\n".join(texts), "\n".join(expected), display)
    )
    return messages.hunk_not_found(display, number, diagnosis.text, diagnosis.details)
