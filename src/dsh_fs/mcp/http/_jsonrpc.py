"""Request bodies read as the library reads arguments, so every request with an id gets an
answer to that id.

The SDK's streamable HTTP transport parses a POST body with pydantic's strict JSON parser,
which refuses what a client may well send and the library answers for itself: a lone
surrogate escape (``"\\ud800"``, which ``JSON.stringify`` writes for a lone surrogate), a
value nested 200 levels deep, an integer of more than 4,300 digits. Such a request got
``-32700`` with ``id: null``, and the parser reads ``-0`` as ``0`` where the library keeps a
negative zero (`dsh_fs.runtime.parse_json`). `read_request` parses the body with
`parse_json`, as the stdio transport parses long lines, and takes a ``tools/call``'s
arguments out of the message: the SDK parses the rest, and the tool gets the arguments as
parsed here, so it answers them as it does anywhere else (``FS_NOT_TEXT`` for a lone
surrogate in ``content``, ``INVALID_ARGS`` for a value that is no lossless JSON).

What cannot be answered that way is answered here, to the request's id when it can be
found: a body nested deeper than Python's parser follows, or invalid JSON
(``-32700``), or a part outside the arguments that the SDK's parser would refuse
(``-32602``/``-32600``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import mcp_types as types
import pydantic_core
from mcp_types.jsonrpc import JSONRPCError

from dsh_fs.runtime import parse_json

from .._request_id import RequestId, body_id, echoable_id

__all__ = [
    "Forward",
    "Refusal",
    "parse_body",
    "read_request",
    "readdressed",
]

_NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.eE])")
"""The integer token ``-0`` (or the same characters inside a string: harmless)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Forward:
    """A request to hand to the SDK's transport."""

    body: bytes
    """The message to parse: strict JSON the SDK's parser accepts, without the arguments of
    a ``tools/call``."""
    arguments: dict[str, object] | None
    """The ``tools/call`` arguments taken out of `body`, or None (nothing taken out)."""
    request_id: RequestId | None = None
    """The request's id: a refusal the SDK answers to ``id: null`` (an unknown session, the
    session cap, an ``Accept`` it does not serve) is readdressed to it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A request answered with a JSON-RPC error to its id, without reaching the SDK."""

    reply: JSONRPCError
    """The error, addressed to the request's id."""


def _error(request_id: RequestId, code: int, message: str) -> Refusal:
    return Refusal(
        reply=JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
    )


def _unparsed(body: bytes, message: str) -> Refusal | None:
    request_id = body_id(body)
    return None if request_id is None else _error(request_id, types.PARSE_ERROR, message)


def _strict(value: object) -> bytes:
    """`value` as JSON the SDK's parser accepts.

    Raises:
        ValueError: a string holds a lone surrogate, a number is not finite, or the SDK's
            parser refuses the text (nesting, number range).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        body = text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError:
        raise ValueError("a number is out of range") from None
    pydantic_core.from_json(body)
    return body


def parse_body(body: bytes) -> object:
    """`body` as `parse_json` reads it. pydantic's parser is faster on the usual body (long
    strings of plain text and line breaks) and reads every value it accepts as `parse_json`
    does, except the integer ``-0`` (it gives ``0``); so it goes first, and a body holding
    ``-0``, or one it refuses (a lone surrogate, deep nesting, a huge integer, invalid
    JSON), is parsed by `parse_json`.

    Raises:
        ValueError: `body` is not valid JSON.
        RecursionError: it is nested too deeply for `parse_json`.
    """
    if not _NEGATIVE_ZERO.search(body):
        try:
            return pydantic_core.from_json(body)
        except ValueError:
            pass
    return parse_json(body)


def read_request(body: bytes) -> Forward | Refusal | None:
    """How to serve one POSTed JSON-RPC message.

    Returns:
        `Forward` for a request: the message for the SDK, and a ``tools/call``'s arguments
        to hand to the tool. `Refusal` for a request the SDK could not answer to its id.
        None for anything else (a notification, a response, a batch, a body whose id can't
        be found): the SDK answers it as it always did.
    """
    try:
        message = parse_body(body)
    except RecursionError:
        return _unparsed(body, "Parse error: nested too deeply")
    except ValueError as exc:
        return _unparsed(body, f"Parse error: {exc}")
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = echoable_id(message.get("id"))
    if request_id is None:
        return None
    params = message.get("params")
    arguments = None
    if (
        message["method"] == "tools/call"
        and isinstance(params, dict)
        and isinstance(params.get("arguments"), dict)
    ):
        arguments = params["arguments"]
        params = {name: value for name, value in params.items() if name != "arguments"}
        message = {**message, "params": params}
    try:
        forward = _strict(message)
    except ValueError as exc:
        try:
            _strict({**message, "params": None})
        except ValueError:
            return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: {exc}")
        return _error(request_id, types.INVALID_PARAMS, f"Invalid params: {exc}")
    return Forward(body=forward, arguments=arguments, request_id=request_id)


def readdressed(body: bytes, request_id: RequestId) -> bytes | None:
    """`body` with its ``id`` set to `request_id`, when it is a JSON-RPC error addressed to
    ``id: null`` (what the SDK's transport sends when it refuses a request before reading
    its id); else None (leave the body as it is)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and "id" in message
        and message["id"] is None
        and isinstance(message.get("error"), dict)
    ):
        return None
    message["id"] = request_id
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
