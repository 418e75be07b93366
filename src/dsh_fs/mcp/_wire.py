"""JSON-RPC 2.0 messages, one per line, without the MCP SDK: parsing that finds the id of
every request it can, and encoding.

A request the server cannot read must still be answered, or its client waits for its
timeout: when a line is no valid JSON (nested too deeply for the parser, invalid UTF-8, cut
short) or is too long to read at all, the `id` is looked for at the line's top level (its
head, and its end) and the error goes to that id. Python's `json` reads what a JavaScript
client may send that strict parsers refuse: a lone surrogate escape reaches the tool (which
refuses it as not text), an integer too long for Python is Infinity as in JavaScript (the
runtime refuses it as not losslessly serializable), ``-0`` stays negative (`parse_json`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from dsh_fs.runtime import parse_json

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Malformed",
    "Message",
    "RequestId",
    "encode",
    "error_response",
    "is_request_id",
    "parse_line",
    "recover_id",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

RequestId: TypeAlias = "str | int"
Message: TypeAlias = "dict[str, Any]"
"""A JSON-RPC message whose envelope was checked: a request (``id`` and ``method``), a
notification (``method``, no ``id``) or a response (``id`` and ``result`` or ``error``)."""

SCAN_BYTES: Final = 1 << 16
"""How much of a line's head (and of its end) the id is looked for in: a bounded scan, even
for a line of many megabytes of brackets."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    """A line that is no message the server can act on: answered with this error."""

    id: RequestId | None
    """The request's id, when it could be found (else the answer's id is null)."""
    code: int
    """The JSON-RPC error code (`PARSE_ERROR`, `INVALID_REQUEST`)."""
    message: str
    """The error's message."""


def is_request_id(value: object) -> bool:
    """Whether `value` can be a request id: a string or an integer (a bool is not one)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def parse_line(line: bytes) -> Message | Malformed:
    """One line as a JSON-RPC message, or the error that answers it."""
    try:
        data = parse_json(line)
    except RecursionError:
        return Malformed(
            id=recover_id(line, line),
            code=PARSE_ERROR,
            message="Parse error: the message nests arrays or objects too deeply",
        )
    except ValueError:  # invalid JSON or invalid UTF-8
        return Malformed(id=recover_id(line, line), code=PARSE_ERROR, message="Parse error")
    return _envelope(data)


def _envelope(data: object) -> Message | Malformed:
    if not isinstance(data, dict):
        return Malformed(id=None, code=INVALID_REQUEST, message="Invalid Request")
    if "method" not in data and ("result" in data or "error" in data):
        return data  # a response: the server sends no requests, so it is dropped
    ident = data.get("id")
    if "id" in data and not is_request_id(ident):
        return Malformed(id=None, code=INVALID_REQUEST, message="Invalid Request")
    params = data.get("params")
    if (
        data.get("jsonrpc") != "2.0"
        or not isinstance(data.get("method"), str)
        or (params is not None and not isinstance(params, dict))
    ):
        return Malformed(id=ident, code=INVALID_REQUEST, message="Invalid Request")
    return data


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


def recover_id(head: bytes, tail: bytes) -> RequestId | None:
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


# Made once: `json.dumps` with options builds an encoder per call.
_UTF8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode(message: Message) -> bytes:
    """`message` as one line of compact JSON (UTF-8; escaped ASCII when a string holds a
    lone surrogate, which UTF-8 cannot carry)."""
    try:
        return _UTF8.encode(message).encode() + b"\n"
    except UnicodeEncodeError:
        return _ASCII.encode(message).encode() + b"\n"


def error_response(
    ident: RequestId | None, code: int, message: str, data: object = None
) -> Message:
    """A JSON-RPC error response (``data`` only when given)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": error}
