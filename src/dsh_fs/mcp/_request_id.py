"""Finding the id of a JSON-RPC request that did not parse, so its error goes to that id.

A request the server cannot read must still be answered, or its client waits for its
timeout. Both transports look for the id here, without parsing the message:

- `line_id` (stdio): the ``"id"`` of the object a line holds, from its first and last
  `SCAN_BYTES` only (a line may be too long to read whole).
- `body_id` (HTTP): the top-level ``"id"`` of a body read whole, when its top-level
  ``"method"`` is there too (a notification or a fragment gets None), within `_MAX_TOKENS`
  tokens.

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
"""Tokens `body_id` looks at before it gives up (bounds its work on hostile bodies)."""

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]+|[:,]|[^\s"\[\]{}:,]+', re.DOTALL)
"""A JSON string, a run of brackets, a separator, or a bare literal (number, true, …)."""


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


def body_id(body: bytes) -> RequestId | None:
    """The top-level ``"id"`` of a request whose body did not parse, when its top-level
    ``"method"`` is there too (a notification or a fragment gets None). Looks at the
    top-level members only, whatever lies nested in between, and at most `_MAX_TOKENS`
    tokens."""
    depth = 0
    key: bytes | None = None
    expect_value = False
    members: dict[bytes, bytes] = {}
    for count, match in enumerate(_TOKEN.finditer(body)):
        if count > _MAX_TOKENS:
            return None
        token = match.group()
        if token[:1] in (b"[", b"]", b"{", b"}"):
            if depth == 1 and expect_value:
                expect_value = False  # a container value: not an id or a method
            depth += token.count(b"[") + token.count(b"{") - token.count(b"]") - token.count(b"}")
            if depth <= 0:
                break
        elif depth != 1:
            continue
        elif token == b":":
            expect_value = key is not None
        elif token == b",":
            key, expect_value = None, False
        elif expect_value:
            if key is not None:
                members[key] = token
            key, expect_value = None, False
        elif token[:1] == b'"':
            key = token
    try:
        method = json.loads(members[b'"method"'])
        request_id = json.loads(members[b'"id"'])
    except (KeyError, ValueError):
        return None
    return echoable_id(request_id) if isinstance(method, str) else None


_SPACE = rb"[ \t\r\n]*"
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"[^,}\]\s]+")
_NEXT = re.compile(_SPACE + rb"(.)", re.DOTALL)
_NESTED = re.compile(rb'["\[\]{}]')
_ID_VALUE = re.compile(rb'-?[0-9]+(?![0-9.eE])|"(?:[^"\\]|\\.)*"', re.DOTALL)
_ID_AT_END = re.compile(
    rb'[{,]' + _SPACE + rb'"id"' + _SPACE + rb":" + _SPACE
    + rb'(-?[0-9]+|"(?:[^"\\]|\\.)*")' + _SPACE + rb"}" + _SPACE + rb"$",
    re.DOTALL,
)  # fmt: skip


def line_id(head: bytes, tail: bytes) -> RequestId | None:
    """The ``id`` of the JSON object a line holds, from its first and last bytes only.

    `head` is the line's beginning, `tail` its end (the same bytes for a line read whole).
    The head's top-level members are walked (strings and nested values skipped without
    parsing them) up to `SCAN_BYTES`; failing that, an ``"id"`` that is the object's last
    member is read at its end. None when neither finds a string or integer id.
    """
    found = _id_in_head(head[:SCAN_BYTES])
    if found is None:
        at_end = _ID_AT_END.search(tail[-SCAN_BYTES:])
        if at_end is not None:
            found = _id_token(at_end.group(1))
    return found


def _id_in_head(text: bytes) -> RequestId | None:
    start = _NEXT.match(text)
    if start is None or start.group(1) != b"{":
        return None
    pos = start.end()
    while True:
        key = _NEXT.match(text, pos)
        if key is None or key.group(1) != b'"':
            return None
        name = _STRING.match(text, key.start(1))
        if name is None:
            return None
        colon = _NEXT.match(text, name.end())
        if colon is None or colon.group(1) != b":":
            return None
        value = _NEXT.match(text, colon.end())
        if value is None:
            return None
        if name.group() == b'"id"':
            token = _ID_VALUE.match(text, value.start(1))
            return None if token is None else _id_token(token.group())
        end = _skip_value(text, value.start(1))
        if end is None:
            return None
        after = _NEXT.match(text, end)
        if after is None or after.group(1) != b",":
            return None
        pos = after.end()


def _skip_value(text: bytes, pos: int) -> int | None:
    """Where the JSON value starting at `pos` ends, without parsing it (None: not in `text`)."""
    first = text[pos : pos + 1]
    if first == b'"':
        string = _STRING.match(text, pos)
        return None if string is None else string.end()
    if first not in (b"{", b"["):
        scalar = _SCALAR.match(text, pos)
        return None if scalar is None else scalar.end()
    depth = 0
    while True:
        mark = _NESTED.search(text, pos)
        if mark is None:
            return None
        if mark.group() == b'"':
            string = _STRING.match(text, mark.start())
            if string is None:
                return None
            pos = string.end()
            continue
        depth += 1 if mark.group() in b"[{" else -1
        pos = mark.end()
        if depth == 0:
            return pos


def _id_token(token: bytes) -> RequestId | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if is_request_id(value) else None
