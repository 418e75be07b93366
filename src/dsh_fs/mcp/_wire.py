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
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from dsh_fs.runtime import parse_json

from ._request_id import RequestId, is_request_id, line_id

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
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

Message: TypeAlias = "dict[str, Any]"
"""A JSON-RPC message whose envelope was checked: a request (``id`` and ``method``), a
notification (``method``, no ``id``) or a response (``id`` and ``result`` or ``error``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    """A line that is no message the server can act on: answered with this error."""

    id: RequestId | None
    """The request's id, when it could be found (else the answer's id is null)."""
    code: int
    """The JSON-RPC error code (`PARSE_ERROR`, `INVALID_REQUEST`)."""
    message: str
    """The error's message."""


def parse_line(line: bytes) -> Message | Malformed:
    """One line as a JSON-RPC message, or the error that answers it."""
    try:
        data = parse_json(line)
    except RecursionError:
        return Malformed(
            id=line_id(line, line),
            code=PARSE_ERROR,
            message="Parse error: the message nests arrays or objects too deeply",
        )
    except ValueError:  # invalid JSON or invalid UTF-8
        return Malformed(id=line_id(line, line), code=PARSE_ERROR, message="Parse error")
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
