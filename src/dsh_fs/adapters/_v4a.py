"""Reading V4A diffs, the patch format OpenAI models emit through ``apply_patch``.

An ``update_file`` diff is a list of hunks: optional ``@@ <line>`` headers naming a line to
find first (a class, a function), then lines starting with a space (context), ``-``
(removed) or ``+`` (added); ``*** End of File`` pins a hunk to the end of the file. A
``create_file`` diff is the new file's lines, each starting with ``+``.

Parsing is strict and changes nothing: anything else is a `V4AError` that names the line.
Locating and applying the hunks is the provider's job (`dsh_fs.fs.FsPatchRequest`): the
context and removed lines must match the file exactly, in order, all or nothing.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["V4AError", "parse_create_diff", "parse_update_diff"]

END_OF_FILE = "*** End of File"

_UNIFIED_HEADER = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")


class V4AError(ValueError):
    """A diff that is not V4A; the message tells the model what to send instead."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _lines(diff: str) -> list[str]:
    lines = [line.removesuffix("\r") for line in diff.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_create_diff(diff: str) -> str:
    """The content of a new file: each ``+`` line, with a newline after it.

    Raises:
        V4AError: a line does not start with ``+``.
    """
    lines = _lines(diff)
    for number, line in enumerate(lines, 1):
        if not line.startswith("+"):
            raise V4AError(
                f"line {number} of the create_file diff ({line!r}) must start with + "
                "(every line of a new file is an added line)"
            )
    return "".join(f"{line[1:]}\n" for line in lines)


def parse_update_diff(diff: str) -> list[dict[str, Any]]:
    """The hunks of an ``update_file`` diff, as the `patch` tool takes them.

    Raises:
        V4AError: an empty diff, a hunk without lines, a unified-diff header, an envelope
            line (``*** Begin Patch``), or a line that is neither a header nor starts with
            a space, ``-`` or ``+``. An empty line is an empty context line.
    """
    lines = _lines(diff)
    if not lines:
        raise V4AError("the update_file diff is empty")
    hunks: list[dict[str, Any]] = []
    index = 0
    while index < len(lines):
        anchors: list[str] = []
        headers = 0
        while index < len(lines) and (lines[index] == "@@" or lines[index].startswith("@@ ")):
            if _UNIFIED_HEADER.match(lines[index]):
                raise V4AError(
                    f"line {index + 1} ({lines[index]!r}) is a unified diff header; V4A "
                    "hunks start with @@ alone or @@ followed by a line of the file "
                    "(a class or function), without line numbers"
                )
            text = lines[index][3:]
            if text.strip():
                anchors.append(text)
            headers += 1
            index += 1
        if not headers and hunks:
            raise V4AError(f"line {index + 1} ({lines[index]!r}) must start a new hunk with @@")
        body: list[str] = []
        at_end = False
        while index < len(lines):
            raw = lines[index]
            if raw == "@@" or raw.startswith("@@ "):
                break
            index += 1
            if raw == END_OF_FILE:
                at_end = True
                break
            if raw.startswith(("***", "@@")):
                raise V4AError(
                    f"line {index} ({raw!r}) is not part of an update_file diff: send only "
                    "the hunks (@@ lines, and lines starting with a space, - or +)"
                )
            line = raw or " "
            if line[0] not in " -+":
                raise V4AError(
                    f"line {index} ({raw!r}) must start with a space (context), - (removed), "
                    "+ (added) or @@"
                )
            body.append(line)
        if not body:
            raise V4AError(f"hunk {len(hunks) + 1} of the update_file diff has no lines")
        hunks.append({"anchors": anchors, "lines": body, "at_end": at_end})
    return hunks
