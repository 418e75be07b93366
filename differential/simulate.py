"""A model of the read window (SPEC §6), parameterized by how line length is counted.

Used by the classifier to prove a cause rather than guess it: a read divergence is put in
the "cut before a surrogate pair" class only when upstream's text equals this model run in
``utf16`` mode (the cut may fall between the two halves of a pair, as JavaScript's
`substring` does) *and* ours equals it in ``utf16-pair`` mode (such a cut is made before the
pair).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["render_read"]

MAX_LINES = 2000
MAX_LINE = 2000
MAX_BYTES = 51200

Counting = Literal["utf16", "utf16-pair"]


def _truncate(line: str, counting: Counting) -> str:
    units = line.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * MAX_LINE:
        return line
    head = units[: 2 * MAX_LINE].decode("utf-16-le", "surrogatepass")
    if counting == "utf16-pair" and "\ud800" <= head[-1] <= "\udbff":
        head = head[:-1]
    return f"{head}... (line truncated to {MAX_LINE} chars)"


def render_read(
    display_path: str, data: bytes, offset: int, limit: int, counting: Counting
) -> str | None:
    """The rendered read of `data`, or None when the model does not cover it (binary,
    invalid UTF-8, an offset past the end)."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    kept: list[tuple[int, str]] = []
    used = 0
    capped = False
    for number, raw in enumerate(raw_lines, start=1):
        if capped or number < offset or len(kept) >= limit:
            continue
        line = _truncate(raw.removesuffix("\r"), counting)
        size = len(line.encode("utf-8", "surrogatepass")) + (1 if kept else 0)
        if used + size > MAX_BYTES:
            capped = True
            continue
        used += size
        kept.append((number, line))
    total = len(raw_lines)
    if not capped and offset > total and not (total == 0 and offset == 1):
        return None
    end = kept[-1][0] if kept else max(0, offset - 1)
    if capped:
        footer = f"(Output capped. Showing lines {offset}-{end}. Use offset={end + 1} to continue.)"
    elif end < total:
        footer = f"(Showing lines {offset}-{end} of {total}. Use offset={end + 1} to continue.)"
    else:
        footer = f"(End of file - total {total} lines)"
    body = "\n".join(f"{n}: {line}" for n, line in kept) + "\n\n" + footer if kept else footer
    return f"<path>{display_path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"
