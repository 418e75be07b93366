"""Finding the id of a JSON-RPC request that did not parse, so its error goes to that id.

A request the server cannot read must still be answered, or its client waits for its
timeout. Both transports find the id with one walker over the message's top-level members
(`_top_level`: strings and nested values are stepped over without parsing them, at most
`_MAX_TOKENS` tokens), through two doors:

- `line_id` (stdio): from a line's first and last `SCAN_BYTES` only (a line may be too long
  to read whole). When the head holds no id, one that is the object's last member is read
  at the line's end.
- `body_id` (HTTP): from a body (or the prefix of one too large to read), only when its
  top-level ``"method"`` is there too (a notification or a response gets None).

An id is a string or an integer, never a bool (`is_request_id`); one echoed into a strict
JSON reply must also encode as UTF-8 (`echoable_id`).
"""

from __future__ import annotations

import json
import re
from typing import Final, TypeAlias, TypeGuard

__all__ = ["SCAN_BYTES", "RequestId", "body_id", "echoable_id", "is_request_id", "line_id"]

RequestId: TypeAlias = "str | int"

SCAN_BYTES: Final = 1 << 16
"""How much of a line's head (and of its end) the id is looked for in: a bounded scan, even
for a line of many megabytes of brackets."""

_MAX_TOKENS: Final = 100_000
"""Tokens `_top_level` looks at before it gives up (bounds its work on hostile bodies)."""

_TOKEN = re.compile(
    rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]+|[:,]|[^\s"\[\]{}:,]+|"', re.DOTALL
)  # fmt: skip
"""A JSON string, a run of brackets, a separator, a bare literal (number, true, …), or the
opening quote of a string that does not end (where the walk stops)."""

_SPACE = rb"[ \t\r\n]*"
_ID_AT_END = re.compile(
    rb'[{,]' + _SPACE + rb'"id"' + _SPACE + rb":" + _SPACE
    + rb'(-?[0-9]+|"(?:[^"\\]|\\.)*")' + _SPACE + rb"}" + _SPACE + rb"$",
    re.DOTALL,
)  # fmt: skip
"""An ``"id"`` that is the last member of the object a line's end closes."""


def is_request_id(value: object) -> TypeGuard[str | int]:
    """Whether `value` can be a request id: a string or an integer (a bool is not one)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def echoable_id(value: object) -> RequestId | None:
    """`value` if it can be a request's id and be echoed as strict JSON, else None."""
    if not is_request_id(value):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return value


def line_id(head: bytes, tail: bytes) -> RequestId | None:
    """The ``id`` of the JSON object a line holds, from its first and last bytes only.

    `head` is the line's beginning, `tail` its end (the same bytes for a line read whole).
    None when neither holds a string or integer id at the object's top level.
    """
    members = _top_level(head[:SCAN_BYTES])
    if b'"id"' in members:
        return _request_id(members[b'"id"'])
    at_end = _ID_AT_END.search(tail[-SCAN_BYTES:])
    return None if at_end is None else _request_id(at_end.group(1))


def body_id(body: bytes) -> RequestId | None:
    """The top-level ``"id"`` of a request whose body did not parse, when its top-level
    ``"method"`` is a string there too (a notification or a fragment gets None)."""
    members = _top_level(body)
    try:
        method = json.loads(members[b'"method"'])
    except (KeyError, ValueError):
        return None
    if not isinstance(method, str) or b'"id"' not in members:
        return None
    return echoable_id(_request_id(members[b'"id"']))


def _top_level(text: bytes) -> dict[bytes, bytes]:
    """The scalar members of the object `text` opens, by their quoted key, as far as they
    can be read: up to the object's end, an unterminated string, the end of `text`, or
    `_MAX_TOKENS` tokens. A member whose value is an object or an array is left out; a
    repeated key keeps its first value."""
    members: dict[bytes, bytes] = {}
    depth = 0
    key: bytes | None = None
    expect_value = False
    for count, match in enumerate(_TOKEN.finditer(text)):
        token = match.group()
        if count > _MAX_TOKENS or token == b'"':
            break
        if token[:1] in b"[]{}":
            if depth == 0 and token[:1] != b"{":
                break  # not an object
            if depth == 1 and expect_value:
                expect_value = False  # a container value: not an id or a method
            depth += token.count(b"[") + token.count(b"{") - token.count(b"]") - token.count(b"}")
            if depth <= 0:
                break
        elif depth != 1:
            if depth == 0:
                break  # not an object
        elif token == b":":
            expect_value = key is not None
        elif token == b",":
            key, expect_value = None, False
        elif expect_value:
            if key is not None:
                members.setdefault(key, token)
            key, expect_value = None, False
        elif token[:1] == b'"':
            key = token
    return members


def _request_id(token: bytes) -> RequestId | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if is_request_id(value) else None
