"""grep's regular expressions: ripgrep's (Rust) syntax, compiled with RE2 for the pure engine.

RE2 and Rust's regex crate share their syntax and their guarantee (linear time, so no
lookaround and no backreferences). Where their defaults differ, the pattern is rewritten so
it means what ripgrep means: ``\\d``, ``\\w`` and ``\\s`` are Unicode classes in Rust and
ASCII in RE2. Lines are matched one at a time (``^`` and ``$`` at line boundaries, nothing
across a newline), and a pattern naming a newline is refused, as ripgrep refuses it. Every
grep compiles its pattern here first, whichever engine then runs it, so an invalid pattern
is the same error on both.
"""

from __future__ import annotations

from typing import Any

import re2

from dsh_fs.fs import messages

__all__ = ["compile_line_regex"]

_WORD = r"\p{L}\p{M}\p{Nd}\p{Pc}"
_SPACE = r"\t\n\v\f\r \x{85}\p{Z}"
_OUTSIDE = {
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
_INSIDE = {"d": r"\p{Nd}", "w": _WORD, "s": _SPACE}


def compile_line_regex(pattern: str) -> Any:
    """The RE2 program (bytes, UTF-8) that matches what ripgrep's `pattern` matches in a line.

    Raises:
        FsError: `SEARCH_INVALID_PATTERN` with the reason.
    """
    if "\0" in pattern:  # no text line holds one (a NUL byte makes a file binary)
        raise messages.invalid_pattern("regex", pattern, _NUL)
    try:
        source = _rewrite(pattern).encode("utf-8")
    except UnicodeEncodeError:
        raise messages.invalid_pattern("regex", pattern, "not valid Unicode") from None
    options = re2.Options()
    options.log_errors = False
    options.never_nl = True
    try:
        re2.compile(source, options)  # alone first, so a refusal quotes the model's pattern
        return re2.compile(b"(?m)" + source, options)
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise messages.invalid_pattern("regex", pattern, str(reason)) from None


_NUL = "a NUL byte is not allowed in a pattern"


def _rewrite(pattern: str) -> str:
    """`pattern` with Rust's Unicode ``\\d``, ``\\w``, ``\\s`` spelled out for RE2.

    Raises:
        FsError: the pattern names a newline.
    """
    out: list[str] = []
    depth = 0
    # A class may name `\n` among other members, as ripgrep allows (`[^\n]`, `[a\n]`: a
    # line has no newline to match); a class that matches nothing but a newline is refused.
    only_newlines = False
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\n":
            raise _newline(pattern)
        if char == "\\" and i + 1 < n:
            escaped = pattern[i + 1]
            if escaped == "n" and not depth:
                raise _newline(pattern)
            if escaped != "n":
                only_newlines = False
            table = _INSIDE if depth else _OUTSIDE
            out.append(table.get(escaped, "\\" + escaped))
            i += 2
            continue
        if char == "[":
            depth += 1
            out.append(char)
            only_newlines = depth == 1
            # `[]…]` and `[^]…]`: a leading `]` is a member, not the end.
            if pattern.startswith("^]", i + 1):
                out.append("^]")
                i += 2
                only_newlines = False
            elif pattern.startswith("]", i + 1):
                out.append("]")
                i += 1
                only_newlines = False
            elif pattern.startswith("^", i + 1):
                out.append("^")
                i += 1
                only_newlines = False
        elif char == "]" and depth:
            depth -= 1
            if only_newlines and not depth:
                raise _newline(pattern)
            out.append(char)
        else:
            only_newlines = False
            out.append(char)
        i += 1
    return "".join(out)


def _newline(pattern: str) -> Exception:
    return messages.invalid_pattern("regex", pattern, "the literal '\\n' is not allowed in a regex")
