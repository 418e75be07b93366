"""The placeholder guard (SPEC §8.3): a change whose new text stands for code it deletes.

Models write ``// ... existing code ...`` into a whole-file write, or copy a compacted
context's ``...[truncated]`` marker, and the code the line stands for is silently gone. A
change is refused when its new text adds such a line (one the replaced text did not have)
while it removes at least `MIN_REMOVED` lines.

Pure text, no I/O: the tools call `find_placeholder` with the text a change replaces and the
text it puts in its place, where they know both (an edit's old_string and new_string, a
patch's old and new hunk lines, a write's prior file and content). `might_hold_placeholder`
is the cheap test a write makes first, so that only a content with a candidate line costs a
read of the prior file.

Real code is never a placeholder: a Python ``...`` that is a block's whole body (a Protocol
stub, an abstract method), a doctest's continuation, YAML's end-of-document ``...``, an
ellipsis inside an expression (``x[..., 0]``), a comment whose sentence merely contains
"..." (``# wait... then retry``), a string that spells a marker (``"...[truncated]"``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final, Literal

from dsh_fs.fs import FsEdit, FsEditRequest, FsPatchRequest, messages

__all__ = [
    "MIN_REMOVED",
    "Placeholder",
    "change_texts",
    "find_placeholder",
    "might_hold_placeholder",
    "refuse_placeholder",
]

MIN_REMOVED: Final = 5
"""A change that removes fewer lines than this is never refused (SPEC §8.3)."""

_SHOWN_CHARS = 80

# Substrings one of which every candidate line has, searched case by case: lowering a large
# content costs ~60 ms per MB of non-ASCII text, a `str.find` well under 1 ms.
_HINTS: Final = (
    "...", "\u2026", "runcated", "RUNCATED", "nchanged", "NCHANGED", "xisting", "XISTING",
    "est of", "EST OF", "emainder", "emaining", "mitted", "MITTED",
)  # fmt: skip
_MAX_CHECKED = 512 << 10
"""A new text longer than this (characters) is not checked: no model writes one in one call
(the largest outputs, ~128k tokens, are about half this), and the substring tests cost
~6 ms per MB of non-ASCII text, about what writing the megabyte costs."""

# A comment's opening and closing marks, and brackets a bare note is wrapped in.
_OPENERS: Final = ("{/*", "<!--", "/*", "//", "#", "--", ";", "%", "*", "rem ")
_CLOSERS: Final = ("*/}", "-->", "*/")
_ELLIPSIS = re.compile(r"\.{3,}|\u2026")
_WORD = re.compile(r"[a-z]+")
_OMISSION_WORDS: Final = frozenset(
    {
        "existing", "rest", "unchanged", "remaining", "remain", "remains", "same", "omitted",
        "omit", "previous", "other", "others", "etc", "original", "unmodified", "untouched",
        "elided", "snip", "snipped", "truncated", "similar", "more",
    }
)  # fmt: skip
"""Words that say lines were left out."""
_FILLER_WORDS: Final = frozenset(
    {
        "the", "of", "is", "are", "as", "here", "code", "before", "above", "below", "content",
        "contents", "logic", "implementation", "methods", "functions", "imports", "lines",
        "file", "stays", "stay", "keep", "kept", "unaltered", "tests", "fields", "class",
        "function", "method", "body", "and", "goes", "remain",
    }
)  # fmt: skip
"""Words that may stand beside them in a placeholder note."""
_ONLY_ELLIPSES = re.compile(r"(?:\.{3,4}|\u2026)(?:\s+(?:\.{3,4}|\u2026))*")
# Without an ellipsis, only a comment that is nothing but such a phrase stands for code.
_PHRASE = re.compile(
    r"^(?:the )?(?:rest|remainder) of (?:the )?(?:\w+ )?(?:code|file|class|function|method|"
    r"module|implementation|component|body|content|tests?)s?(?: (?:is |remains |stays |goes "
    r"|as )?(?:unchanged|the same|as before|here|unmodified|omitted))?$"
    r"|^(?:existing|remaining|unchanged) (?:\w+ )?(?:code|methods|"
    r"functions|imports|tests|fields|properties|logic|content|implementation)(?: (?:is |are "
    r"|remains? |stays? )?(?:unchanged|here|omitted|as before|the same|unmodified))?$"
    r"|^(?:code |content )?(?:unchanged|omitted)$"
)
# A compaction marker: ``[truncated]``, ``...[truncated]``, ``[... 40 lines truncated ...]``
# at the end of a line (a line cut short), never inside a string (a quote after it) nor as
# a call's argument (``f(truncated)``); alone on its line, ``<truncated 12 lines>`` and
# ``(output truncated)`` too.
_TRUNCATED = (
    r"(?:\.{3}|\u2026)?\s*(?:\d[\d,]* \w+ )?(?:output |content |text )?truncated"
    r"(?: \d[\d,]* \w+)?\s*(?:\.{3}|\u2026)?\s*"
)
_MARKER_AT_END = re.compile(
    rf"(?:\.{{3}}|\u2026)?\s*\[\s*{_TRUNCATED}\](?:\.{{3}}|\u2026)?$", re.IGNORECASE
)
_MARKER_ALONE = re.compile(
    rf"(?:\.{{3}}|\u2026)?\s*[\[(<]\s*{_TRUNCATED}[\])>]\s*(?:\.{{3}}|\u2026)?", re.IGNORECASE
)
_BLOCK_OPENER = re.compile(r":\s*(?:#.*)?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placeholder:
    """A line of the new text that stands for omitted code, and what the change removes."""

    line: int
    """Its number in the new text (1-based)."""
    text: str
    """The line, stripped of surrounding white space and cut for display."""
    removed: int
    """How many lines of the replaced text the new text no longer has."""


def might_hold_placeholder(text: str) -> bool:
    """Whether `text` could have a placeholder line at all (a substring test; no false
    negatives for `find_placeholder`)."""
    return len(text) <= _MAX_CHECKED and any(hint in text for hint in _HINTS)


def find_placeholder(before: str, after: str, *, path: str = "") -> Placeholder | None:
    """The first line of `after` that stands for omitted code and is not a line of
    `before`, when `after` drops at least `MIN_REMOVED` lines of `before`; else
    None. `path` names the file (its extension tells YAML and stub files apart)."""
    if not might_hold_placeholder(after):
        return None
    had = {line.strip() for line in before.split("\n")}
    lines = after.split("\n")
    kind = _kind(path)
    strings = _PythonStrings(lines) if kind in ("python", "stub") else None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped in had or not _is_placeholder(stripped, lines, index, kind):
            continue
        if strings is not None and stripped == "..." and strings.inside(index):
            continue  # an elision in a docstring's example is documentation, not code
        removed = _removed(before, lines)
        if removed < MIN_REMOVED:
            return None
        shown = stripped if len(stripped) <= _SHOWN_CHARS else stripped[: _SHOWN_CHARS - 1] + "…"
        return Placeholder(line=index + 1, text=shown, removed=removed)
    return None


def refuse_placeholder(verb: Literal["write", "edit"], path: str, before: str, after: str) -> None:
    """Raise the SPEC §8.3 refusal when `after`, replacing `before`, has a placeholder.

    Raises:
        FsError: `FS_PLACEHOLDER`, naming the line, and how many lines would go.
    """
    found = find_placeholder(before, after, path=path)
    if found is not None:
        raise messages.placeholder(verb, path, found.line, found.text, found.removed)


def change_texts(change: FsEdit) -> tuple[str, str] | None:
    """The text an `edit_text` change replaces and the text it puts in its place, where the
    change itself says (a literal edit; a patch's old and new hunk lines); None for an
    insert, which removes nothing."""
    if isinstance(change, FsEditRequest):
        return change.old_string.replace("\r\n", "\n"), change.new_string.replace("\r\n", "\n")
    if isinstance(change, FsPatchRequest):
        old = [text for hunk in change.hunks for op, text in hunk.lines if op != "+"]
        new = [text for hunk in change.hunks for op, text in hunk.lines if op != "-"]
        return "\n".join(old), "\n".join(new)
    return None


def _kind(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.endswith(".pyi"):
        return "stub"
    if name.endswith((".py", ".pyw")):
        return "python"
    if name.endswith((".md", ".markdown", ".rst", ".txt", ".adoc")):
        return "prose"
    return ""


def _removed(before: str, after_lines: list[str]) -> int:
    """Lines of `before` (compared stripped) that `after` no longer has: outside the lines
    both share at their start and end, those of `before` left once `after`'s are taken
    away, counted with their repeats (what the change deletes, wherever the rest moved)."""
    old = [line.strip() for line in before.split("\n")]
    new = [line.strip() for line in after_lines]
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    left = Counter(old[head : len(old) - tail])
    left.subtract(new[head : len(new) - tail])
    return sum(count for count in left.values() if count > 0)


def _is_placeholder(stripped: str, lines: list[str], index: int, kind: str) -> bool:
    if _ELLIPSIS.fullmatch(stripped):
        # "…" (U+2026) is no language's syntax: only prose writes it alone.
        return kind != "prose" if "." not in stripped else _bare_ellipsis(lines, index, kind)
    if _is_marker(stripped):
        return True
    body = _comment_body(stripped)
    if body is None:
        return False
    if _ELLIPSIS.search(body):
        return _ellipsis_note(body)
    phrase = " ".join(_WORD.findall(body.lower()))
    return len(body) <= 60 and _PHRASE.match(phrase) is not None


def _is_marker(stripped: str) -> bool:
    return bool(_MARKER_ALONE.fullmatch(stripped) or _MARKER_AT_END.search(stripped))


class _PythonStrings:
    """Which lines of Python source start inside a triple-quoted string (a docstring),
    counted once, on the first question."""

    __slots__ = ("_inside", "_lines")

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._inside: list[bool] | None = None

    def inside(self, index: int) -> bool:
        if self._inside is None:
            inside: list[bool] = []
            quote: str | None = None
            for line in self._lines:
                inside.append(quote is not None)
                for match in _TRIPLE.finditer(line):
                    if quote is None:
                        quote = match.group(0)
                    elif match.group(0) == quote:
                        quote = None
            self._inside = inside
        return self._inside[index]


_TRIPLE = re.compile(r'"""|\'\'\'')


def _bare_ellipsis(lines: list[str], index: int, kind: str) -> bool:
    """A line that is only an ellipsis: Python's ``...`` body of a block, a doctest's
    continuation and YAML's end of document are code, and prose elides with it (a code sample
    in a README); anything else stands for lines."""
    if kind in ("yaml", "stub", "prose"):
        return False
    before = [line for line in reversed(lines[:index]) if line.strip()]
    if kind == "python":
        # Comments are not code: the line an ellipsis body follows is the code line before.
        before = [line for line in before if not line.lstrip().startswith("#")]
    previous = before[0] if before else ""
    stripped = previous.strip()
    if stripped.startswith((">>>", "...")):
        return False  # a doctest's continuation
    if kind != "python":
        return True
    if _BLOCK_OPENER.search(stripped) or stripped.endswith((",", "(", "[", '"""', "'''")):
        return False  # the body of a def, class, if…, after its docstring, or an argument
    return _indent(lines[index]) <= _indent(previous)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _comment_body(stripped: str) -> str | None:
    """The text of a comment line (or of a note in brackets), without its marks; None for
    a line of code."""
    lowered = stripped.lower()
    body: str | None = None
    for opener in _OPENERS:
        if lowered.startswith(opener):
            body = stripped[len(opener) :]
            break
    if body is None:
        if stripped[:1] in "[(<" and stripped[-1:] in "])>":
            body = stripped[1:-1]
        else:
            return None
    body = body.strip()
    for closer in _CLOSERS:
        if body.endswith(closer):
            body = body[: -len(closer)].strip()
            break
    if body[:1] in "[(" and body[-1:] in "])":
        body = body[1:-1].strip()
    return body


def _ellipsis_note(body: str) -> bool:
    """A comment with an ellipsis stands for code when it is nothing but the ellipsis, or
    opens or closes with it around a few words of omission (``... rest unchanged``,
    ``existing code ...``), not when the ellipsis ends a sentence (``# Sending the
    request...``) or a row of dots draws a rule."""
    if _ONLY_ELLIPSES.fullmatch(body):
        return True
    words = _WORD.findall(body.lower())
    edges = _ELLIPSIS.match(body) is not None or re.search(r"(?:\.{3,}|\u2026)$", body)
    if not words or not edges or len(words) > 8:
        return False
    return all(word in _OMISSION_WORDS or word in _FILLER_WORDS for word in words) and any(
        word in _OMISSION_WORDS for word in words
    )
