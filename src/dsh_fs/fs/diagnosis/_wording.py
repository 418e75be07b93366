"""Every sentence of an edit diagnosis (SPEC §8.2), and the bounded text they make.

The diagnosis follows the first line of `FS_EDIT_NOT_FOUND` / `FS_AMBIGUOUS_EDIT` (built in
`_messages`). Its parts: a header naming the closest lines (or saying nothing is close),
one bullet per recognised reason, the closest lines shown as `read` shows them
(``<n>: <text>``), and the one next step. The whole stays under `MAX_BYTES` of UTF-8.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ._lookalikes import describe_char

__all__ = [
    "MAX_BYTES",
    "Cause",
    "Reason",
    "Subject",
]

MAX_BYTES = 1536
"""Most UTF-8 bytes of a diagnosis (everything after the error's first line)."""

SHOWN_LINE_CHARS = 160
"""Longest line text shown; longer lines are cut as `read` cuts them, with its suffix."""

_MAX_SHOWN_LINES = 8
_MAX_REASONS = 4
_EXCERPT_CHARS = 40
_LINE_LIST = 20

Cause: TypeAlias = Literal[
    "line_number_prefixes",
    "escaped_line_breaks",
    "lookalike",
    "tabs_vs_spaces",
    "indentation",
    "trailing_whitespace",
    "spacing",
    "line_differs",
    "missing_line",
    "line_order",
    "extra_line",
    "edge_line_break",
    "line_endings",
    "unicode_form",
    "partial_match",
    "left_out_lines",
    "loosely_similar",
    "unexplained",
    "already_applied",
    "nothing_close",
    "not_distinctive",
    "too_large",
]
"""The stable name of a reason, for programs (``details["reasons"][i]["cause"]``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """One recognised reason a needle did not match, in plain words."""

    cause: Cause
    """What kind of difference it is."""
    line: int | None
    """The file line it is about (the first one, when several are), if any."""
    message: str
    """The sentence the model reads (after ``- ``)."""

    def to_json(self) -> dict[str, Any]:
        """``{cause, line, message}``."""
        return {"cause": self.cause, "line": self.line, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """How the sentences name the text that was looked for."""

    name: str
    """``old_string``, or ``the expected lines`` for a patch's context block."""
    line_of: str
    """How one of its lines is named, with ``{n}`` for the line number."""


OLD_STRING = Subject(name="old_string", line_of="old_string's line {n}")
"""The edit tool's needle."""
EXPECTED_LINES = Subject(name="the expected lines", line_of="expected line {n}")
"""A block of lines a patch expected to find (e.g. an apply_patch context)."""


def line_number_prefixes(subject: Subject, sample: str) -> Reason:
    """The needle carries read's ``<n>: `` prefixes."""
    return Reason(
        cause="line_number_prefixes",
        line=None,
        message=(
            f"line-number prefixes: {subject.name} starts its lines with numbers like "
            f"{_quote(sample)} copied from read output; they are not part of the file's text"
        ),
    )


def escaped_line_breaks(subject: Subject, newlines: bool, tabs: bool) -> Reason:
    """The needle spells line breaks (tabs) as backslash sequences."""
    if newlines and tabs:
        what, where = '"\\n" and "\\t"', "real line breaks and tabs"
    elif newlines:
        what, where = '"\\n"', "real line breaks"
    else:
        what, where = '"\\t"', "real tabs"
    return Reason(
        cause="escaped_line_breaks",
        line=None,
        message=(
            f"escaped characters: {subject.name} has {what} written as a backslash and a "
            f"letter where the file has {where}"
        ),
    )


def lookalike(
    subject: Subject, line: int, column: int, in_file: str, in_needle: str, more: Sequence[int]
) -> Reason:
    """A look-alike character (curly quote, non-breaking space, dash, invisible character)."""
    message = (
        f"look-alike characters: line {line}, column {column} has {_chars(in_file)} in the "
        f"file where {subject.name} has {_chars(in_needle)}"
    )
    if more:
        message += f" ({len(more)} more on {_lines(more)})"
    return Reason(cause="lookalike", line=line, message=message)


def tabs_vs_spaces(subject: Subject, lines: Sequence[int], in_file: str, in_needle: str) -> Reason:
    """Indentation by tabs on one side, spaces on the other."""
    file_kind = "tabs" if "\t" in in_file else "spaces"
    needle_kind = "tabs" if "\t" in in_needle else "spaces"
    verb = "is" if len(lines) == 1 else "are"
    return Reason(
        cause="tabs_vs_spaces",
        line=lines[0],
        message=(
            f"tabs vs spaces: {_lines(lines)} {verb} indented with {file_kind} in the file, "
            f"with {needle_kind} in {subject.name} (line {lines[0]}: {_whitespace(in_file)} "
            f"vs {_whitespace(in_needle)})"
        ),
    )


def indentation(
    subject: Subject, lines: Sequence[int], shift: int | None, in_file: str, in_needle: str
) -> Reason:
    """Indentation that differs by `shift` spaces on every line, or irregularly (None)."""
    verb = "is" if len(lines) == 1 else "are"
    if shift is None:
        how = f"indented differently in the file than in {subject.name}"
    else:
        more_or_fewer = "more" if shift > 0 else "fewer"
        how = (
            f"indented {abs(shift)} {more_or_fewer} space{'' if abs(shift) == 1 else 's'} in "
            f"the file than in {subject.name}"
        )
    return Reason(
        cause="indentation",
        line=lines[0],
        message=(
            f"indentation: {_lines(lines)} {verb} {how} (line {lines[0]}: "
            f"{_whitespace(in_file)} vs {_whitespace(in_needle)})"
        ),
    )


def trailing_whitespace(
    subject: Subject, lines: Sequence[int], in_file: str, in_needle: str
) -> Reason:
    """Whitespace at the end of a line differs."""
    verb = "ends" if len(lines) == 1 else "end"
    return Reason(
        cause="trailing_whitespace",
        line=lines[0],
        message=(
            f"trailing whitespace: {_lines(lines)} {verb} with {_whitespace(in_file)} in the "
            f"file, with {_whitespace(in_needle)} in {subject.name}"
            + (f" (line {lines[0]})" if len(lines) > 1 else "")
        ),
    )


def spacing(subject: Subject, line: int, column: int, in_file: str, in_needle: str) -> Reason:
    """Whitespace inside a line differs."""
    return Reason(
        cause="spacing",
        line=line,
        message=(
            f"spacing: line {line}, column {column} has {_whitespace(in_file)} in the file "
            f"where {subject.name} has {_whitespace(in_needle)}"
        ),
    )


def line_differs(
    subject: Subject, line: int, column: int, in_file: str, in_needle: str, more: int
) -> Reason:
    """A line whose text differs (the first difference, with a short excerpt)."""
    message = (
        f"line {line} differs at column {column}: the file has {_quote(in_file)} where "
        f"{subject.name} has {_quote(in_needle)}"
    )
    if more:
        message += f" ({more} more line{'s' if more > 1 else ''} differ{'' if more > 1 else 's'})"
    return Reason(cause="line_differs", line=line, message=message)


def missing_line(subject: Subject, index: int, text: str, after: int, more: int) -> Reason:
    """A needle line that the file does not have at that place."""
    where = f"after line {after}" if after > 0 else "before line 1"
    message = (
        f"{subject.line_of.format(n=index)} ({_quote(text.strip())}) is not in the file here "
        f"({where})"
    )
    if more:
        message += f" ({more} more missing)"
    return Reason(cause="missing_line", line=after if after > 0 else None, message=message)


def missing_here(reason: Reason, line: int) -> Reason:
    """A `missing_line` reason whose line the file has, once, outside the closest text."""
    message = reason.message.replace(
        " is not in the file here ", f" is line {line} of the file, not here ", 1
    )
    return Reason(cause="missing_line", line=reason.line, message=message)


def blank_line(subject: Subject, index: int, after: int, more: int) -> Reason:
    """A blank line of the needle that the file does not have (its other lines are there)."""
    message = (
        f"{subject.line_of.format(n=index)} is blank, and the file has no blank line there "
        f"(line {after} is followed by line {after + 1})"
    )
    if more:
        message += f" ({more} more blank line{'s' if more > 1 else ''} the file lacks)"
    return Reason(cause="missing_line", line=after, message=message)


def line_order(subject: Subject, index: int, text: str, line: int, after: int, more: int) -> Reason:
    """A needle line that the file has, but elsewhere in the closest text."""
    where = f"after line {after}" if after > 0 else "before line 1"
    message = (
        f"line order: {subject.line_of.format(n=index)} ({_quote(text.strip())}) is line "
        f"{line} in the file, not {where}"
    )
    if more:
        message += f" ({more} more line{'s' if more > 1 else ''} in another order)"
    return Reason(cause="line_order", line=line, message=message)


def extra_line(subject: Subject, line: int, text: str, more: int) -> Reason:
    """A file line inside the closest text that the needle lacks."""
    message = f"the file has line {line} ({_quote(text.strip())}) here, which {subject.name} lacks"
    if more:
        message += f" ({more} more such line{'s' if more > 1 else ''})"
    return Reason(cause="extra_line", line=line, message=message)


def final_line_break(subject: Subject, line: int) -> Reason:
    """The needle ends with a line break the file's last line does not have."""
    return Reason(
        cause="edge_line_break",
        line=line,
        message=(
            f"line break: {subject.name} ends with a line break, but line {line}, the "
            "file's last line, has none"
        ),
    )


def first_line_break(subject: Subject) -> Reason:
    """The needle starts with a line break, but it matches from the file's first line."""
    return Reason(
        cause="edge_line_break",
        line=1,
        message=(
            f"line break: {subject.name} starts with a line break, but nothing comes before line 1"
        ),
    )


def line_endings(subject: Subject, line: int, crlf: bool) -> Reason:
    """The needle has carriage returns, which never match: a CRLF line ending reads as LF."""
    where = "the file's CRLF line endings are" if crlf else "line endings are"
    return Reason(
        cause="line_endings",
        line=line,
        message=(
            f"line endings: {subject.name} has \\r (carriage return) characters, but "
            f"{where} matched as \\n: write each line break as \\n alone, without \\r"
        ),
    )


def unicode_form(
    subject: Subject, line: int, column: int, in_file: str, in_needle: str, more: int
) -> Reason:
    """The same letters, composed differently (Unicode NFC vs NFD): a look-alike."""
    message = (
        f"look-alike characters: line {line}, column {column} has {_cluster(in_file)} in the "
        f"file where {subject.name} has {_cluster(in_needle)} (the same letter{'s' if more else ''}"
        ", composed differently: Unicode NFC vs NFD)"
    )
    if more:
        message += f" ({more} more)"
    return Reason(cause="lookalike", line=line, message=message)


def partial_match(
    subject: Subject, indexes: Sequence[int], lines: Sequence[int], differs: int | None
) -> Reason:
    """Lines of the needle found verbatim once in the file: they say where it belongs."""
    if len(indexes) == 1:
        what = f"{subject.line_of.format(n=indexes[0] + 1)} is"
    elif indexes[-1] - indexes[0] == len(indexes) - 1 and indexes[0] == 0:
        what = f"the first {len(indexes)} lines of {subject.name} are"
    else:
        what = f"{len(indexes)} lines of {subject.name} are"
    message = f"partial match: {what} in the file exactly, and only at {_lines(lines)}"
    if differs is not None:
        message += f"; the first line that differs is line {differs}"
    return Reason(cause="partial_match", line=differs, message=message)


def left_out_lines(
    subject: Subject, pieces: Sequence[tuple[int, int]], gaps: Sequence[tuple[int, int]]
) -> Reason:
    """Every line of the needle is in the file, in order, as pieces with lines between."""
    spans = _and([_bare_span(a, b) for a, b in pieces])
    left = sum(b - a + 1 for a, b in gaps)
    between = _and([_bare_span(a, b) for a, b in gaps])
    message = (
        f"pieces: every line of {subject.name} is in the file, in order, but as lines "
        f"{spans}, which are not adjacent: {subject.name} leaves out line"
        f"{'s' if left > 1 else ''} {between} ({left} line{'s' if left > 1 else ''}) between them"
    )
    return Reason(cause="left_out_lines", line=gaps[0][0], message=message)


def stitched(
    subject: Subject,
    start: int,
    end: int,
    reason: Reason,
    shown: Sequence[tuple[int, str]],
) -> str:
    """A needle made of non-adjacent pieces of the file: the whole span, the pieces and the
    lines left out between them, and what to do."""
    header = (
        f"The closest text in the file is at {_span(start, end)}, in pieces; it differs from "
        f"{subject.name}:"
    )
    hint = (
        f"Edit each piece with its own {subject.name}, or copy {subject.name} from these lines "
        'exactly with the lines between the pieces, without the "<n>: " prefixes.'
    )
    return _assemble([header], [reason], shown, (start, end), hint)


def loosely_similar(subject: Subject, start: int, clause: str) -> Reason:
    """Nothing is close, but one place is loosely similar (`clause` says how): named with
    a hedge."""
    return Reason(
        cause="loosely_similar",
        line=start,
        message=(
            f"loosely similar: nothing in the file is close to {subject.name}, but {clause}; "
            f"{subject.name} may be stale or partly invented"
        ),
    )


def defines_once(subject: Subject, line: int, what: str, name: str, index: int) -> str:
    """The clause of `loosely_similar` for a name the file defines (imports) once."""
    return (
        f"line {line} {what} {name!r}, as {subject.line_of.format(n=index)} does, and no "
        "other line does"
    )


def shares_text(start: int, end: int, share: int) -> str:
    """The clause of `loosely_similar` for an alignment short of close."""
    verb = "has" if start == end else "have"
    return f"{_span(start, end)} {verb} about {share}% of its text"


def loose(
    subject: Subject, start: int, end: int, reason: Reason, shown: Sequence[tuple[int, str]]
) -> str:
    """The loosely similar place, hedged: read it before editing."""
    header = (
        f"Nothing in the file is close to {subject.name}; the most similar text is at "
        f"{_span(start, end)}, loosely:"
    )
    hint = f"Read these lines, then copy {subject.name} from the read output exactly."
    return _assemble([header], [reason], shown, (start, end), hint)


def unexplained(subject: Subject, line: int) -> Reason:
    """A difference no rule names (should be rare: say so rather than guess)."""
    return Reason(
        cause="unexplained",
        line=line,
        message=(
            f"unexplained: {subject.name} differs from these lines in a way dsh-fs cannot "
            "name; compare them character by character"
        ),
    )


def near_miss(
    subject: Subject,
    start: int,
    end: int,
    reasons: Sequence[Reason],
    shown: Sequence[tuple[int, str]],
    *,
    others: Sequence[tuple[int, int]] = (),
    similar: Sequence[tuple[int, int]] = (),
    bounded: bool = False,
    cut: bool = False,
) -> str:
    """The closest text, why it differs, the lines themselves, and what to do. `others` are
    equally close places; `similar` are places nearly as close (two near-copies)."""
    header = f"The closest text in the file is at {_span(start, end)}"
    if others:
        header += " (equally close: " + ", ".join(_span(a, b) for a, b in others[:3]) + ")"
    if similar:
        header += "; also similar: " + ", ".join(_span(a, b) for a, b in similar[:2]) + ";"
    header += (
        f" it differs from {subject.name}:" if similar else f"; it differs from {subject.name}:"
    )
    if cut:
        header += f" (only the first lines of {subject.name} were compared)"
    hint = (
        f'To edit these lines, copy {subject.name} from them exactly, without the "<n>: " prefixes.'
    )
    if bounded:
        hint += " (The file is large, so the search stopped early: a closer text may exist.)"
    return _assemble([header], reasons, shown, (start, end), hint)


def already_applied(
    subject: Subject,
    start: int,
    end: int,
    places: int,
    shown: Sequence[tuple[int, str]],
    similar: tuple[int, int] | None = None,
    reindented: bool = False,
) -> tuple[str, Reason]:
    """new_string is in the file (or its lines are, indented otherwise) and old_string is
    not."""
    where = _span(start, end)
    if places > 1:
        where += f" (and {places - 1} other place{'s' if places > 2 else ''})"
    if reindented:
        where += " apart from indentation"
    reason = Reason(
        cause="already_applied",
        line=start,
        message=f"already applied: new_string is at {where}, and {subject.name} is nowhere",
    )
    header = (
        f"new_string is already in the file at {where}, and {subject.name} is not: the edit "
        "looks already applied."
    )
    if similar is not None:
        header += f" (Text similar to {subject.name} is at {_span(*similar)}.)"
    hint = "Read the file to check before editing it again."
    return _assemble([header], [], shown, (start, end), hint), reason


def nothing_close(subject: Subject, *, path: str | None = None) -> tuple[str, Reason]:
    """No region of the file is reasonably close: name no line."""
    where = f'"{path}"' if path else "the file"
    text = (
        f"Nothing in {where} is close to {subject.name}: read the file to find the text you "
        "meant to change, or check the path."
    )
    return text, Reason(cause="nothing_close", line=None, message=text)


def not_distinctive(subject: Subject, piece: str, limit: int) -> tuple[str, Reason]:
    """Nothing close was found, and the pieces of the needle that are in the file are
    everywhere: no line can be named, but the model can make its needle distinctive."""
    text = (
        f"Nothing close to {subject.name} was found, and the parts of it that are in the file, "
        f"such as {_quote(piece)}, occur too often (over {limit} times) to tell which place "
        "you meant: read that part of the file and include a line that occurs only there."
    )
    return text, Reason(cause="not_distinctive", line=None, message=text)


def nothing_close_bounded(subject: Subject, size: int) -> tuple[str, Reason]:
    """Nothing close was found, but the budget cut the search short."""
    text = (
        f"Nothing close to {subject.name} was found, but the file is large ({size:,} "
        "characters) and the search stopped early: read the lines you meant to change and "
        f"copy {subject.name} from the read output."
    )
    return text, Reason(cause="nothing_close", line=None, message=text)


def too_large(subject: Subject, size: int, limit: int) -> tuple[str, Reason]:
    """The file is larger than the search budget: no search at all."""
    text = (
        f"The file is too large ({size:,} characters; the search covers up to {limit:,}) to "
        f"look for text close to {subject.name}: read the lines you meant to change and copy "
        f"{subject.name} from the read output."
    )
    return text, Reason(cause="too_large", line=None, message=text)


def match_lines(lines: Sequence[int], count: int, complete: bool) -> str:
    """Where each match of an ambiguous old_string starts; several on one line are listed
    once with their count (``lines 5 (4 matches) and 6 (2)``)."""
    where = _grouped(lines)
    if complete and count <= len(lines):
        return f"The matches start at {where}."
    if complete:
        return f"The first {len(lines)} matches start at {where}."
    rest = count - len(lines)
    return f"The first matches start at {where}; the file is too large to locate the other {rest}."


def _grouped(lines: Sequence[int]) -> str:
    """``lines 1, 6 and 7`` (as before the grouping); ``line 5 (4 matches)``;
    ``lines 5 (4 matches) and 6 (2)``."""
    counts: dict[int, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    if len(counts) == len(lines):
        return f"lines {_enumerate(lines)}"
    if len(counts) == 1:
        return f"line {lines[0]} ({len(lines)} matches)"
    parts: list[str] = []
    named = False
    for line, many in counts.items():
        if many == 1:
            parts.append(str(line))
        else:
            parts.append(f"{line} ({many})" if named else f"{line} ({many} matches)")
            named = True
    shown = parts[:_LINE_LIST]
    return "lines " + ", ".join(shown[:-1]) + " and " + shown[-1]


def _assemble(
    head: list[str],
    reasons: Sequence[Reason],
    shown: Sequence[tuple[int, str]],
    span: tuple[int, int],
    hint: str,
) -> str:
    """Header, bullets, numbered lines, hint — within `MAX_BYTES`: bullets are dropped from
    the end first (one stays), then shown lines (one stays)."""
    bullets = [f"- {reason.message}" for reason in reasons[:_MAX_REASONS]]
    rendered = [f"{number}: {_shown_text(text)}" for number, text in shown[:_MAX_SHOWN_LINES]]

    def size(parts: list[str]) -> int:
        return len("\n".join(parts).encode("utf-8"))

    reserve = max((len(line.encode("utf-8")) + 1 for line in rendered[:1]), default=0)
    while len(bullets) > 1 and size([*head, *bullets, hint]) + reserve + 40 > MAX_BYTES:
        bullets.pop()
    kept: list[str] = []
    for line in rendered:
        note = _showing(shown, len(kept) + 1, span)
        if kept and size([*head, *bullets, *kept, line, note, hint]) > MAX_BYTES:
            break
        kept.append(line)
    note = _showing(shown, len(kept), span)
    return "\n".join(part for part in [*head, *bullets, *kept, note, hint] if part)


def _showing(shown: Sequence[tuple[int, str]], count: int, span: tuple[int, int]) -> str:
    if not count:
        return ""
    first, last = shown[0][0], shown[count - 1][0]
    if (first, last) == span:
        return ""
    return f"(showing lines {first}-{last} of {span[0]}-{span[1]})"


def _shown_text(text: str) -> str:
    """The line as read shows it, cut at `SHOWN_LINE_CHARS` UTF-16 code units with read's
    suffix (a character outside the BMP counts 2; a pair is never split)."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if char > "\uffff" else 1
        if units > SHOWN_LINE_CHARS:
            return text[:index] + f"... (line truncated to {SHOWN_LINE_CHARS} chars)"
    return text


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _bare_span(start: int, end: int) -> str:
    return str(start) if start == end else f"{start}-{end}"


def _span(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _lines(lines: Sequence[int]) -> str:
    """``line 4``, ``lines 4-6`` (consecutive), ``lines 4, 9 and 12``."""
    unique = sorted(set(lines))
    if len(unique) == 1:
        return f"line {unique[0]}"
    if unique[-1] - unique[0] == len(unique) - 1:
        return f"lines {unique[0]}-{unique[-1]}"
    return f"lines {_enumerate(unique)}"


def _enumerate(numbers: Sequence[int]) -> str:
    shown = [str(n) for n in numbers[:_LINE_LIST]]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _quote(text: str) -> str:
    """A short excerpt, quoted as Python would: tabs, backslashes and invisible characters
    are spelled out (``\\t``, ``\\xa0``), and quotes inside need no escaping."""
    if len(text) > _EXCERPT_CHARS:
        text = text[: _EXCERPT_CHARS - 1] + "…"
    return repr(text)


def _cluster(letters: str) -> str:
    """``é (U+00E9)``, ``e + U+0301 (e followed by a combining mark)``."""
    codes = " + ".join(f"U+{ord(char):04X}" for char in letters)
    return f"{unicodedata.normalize('NFC', letters)} ({codes})"


def _chars(fragment: str) -> str:
    if not fragment:
        return "nothing"
    if len(fragment) == 1:
        return describe_char(fragment)
    if fragment.isascii():
        return _quote(fragment)
    return " ".join(describe_char(char) for char in fragment[:3])


def _whitespace(run: str) -> str:
    """``4 spaces``, ``1 tab``, ``2 tabs and 1 space``, ``nothing``."""
    if not run:
        return "nothing"
    tabs, spaces = run.count("\t"), run.count(" ")
    other = len(run) - tabs - spaces
    parts = []
    if tabs:
        parts.append(f"{tabs} tab{'s' if tabs > 1 else ''}")
    if spaces:
        parts.append(f"{spaces} space{'s' if spaces > 1 else ''}")
    if other:
        named = dict.fromkeys(char for char in run if char not in " \t")
        parts.append(" ".join(describe_char(char) for char in named))
    return " and ".join(parts)
