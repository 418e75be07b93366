"""JSON-RPC lines without the SDK: the envelope checks, and the id found in a line that
cannot be parsed (or is too long to be read whole)."""

from __future__ import annotations

import math

import pytest

from dsh_fs.mcp._request_id import SCAN_BYTES, body_id, line_id
from dsh_fs.mcp._wire import INVALID_REQUEST, PARSE_ERROR, Malformed, encode, parse_line

# Deeper than the JSON parser of every supported Python nests: 3.10-3.12 refuse 5,000 levels,
# 3.13 accepts them (it counts C stack, not levels) and refuses 100,000.
TOO_DEEP = 100_000


@pytest.mark.parametrize(
    ("line", "ident"),
    [
        (b'{"jsonrpc": "2.0", "id": 5, "method": ', 5),
        (b'  {  "id"  :  "abc" , "method": "x"', "abc"),
        (b'{"id": -12, "params": {', -12),
        (b'{"jsonrpc": "2.0", "params": {"id": 7, "x": [1, {"id": 8}]}, "id": "top", ,', "top"),
        (b'{"method": "x", "params": "\\"id\\": 3", "id": 4, }', 4),
        (b'{"a": "back\\\\", "id": 6, !', 6),
        (b'{"a": true, "b": null, "c": -1.5e3, "id": 9 x', 9),
        (
            b'{"jsonrpc": "2.0", "params": {"deep": ' + b"[" * 5000 + b"]" * 5000 + b'}, "id": 10}',
            10,
        ),
        (b'{"jsonrpc": "2.0", "method": "m", "params": {"bad": tru}, "id": 11}', 11),
        (b'{"id": "\\u0041"', "A"),
    ],
)
def test_the_top_level_id_of_a_broken_line_is_found(line: bytes, ident: object) -> None:
    assert line_id(line, line) == ident


@pytest.mark.parametrize(
    "line",
    [
        b'[{"id": 1}]',
        b'{"params": {"id": 1}}',
        b'{"id": null, "method": "x"',
        b'{"id": 1.5, "method": "x"',
        b'{"id": true, "method": "x"',
        b'{"id": [1], "method": "x"',
        b'{"x\\"id": 1}',
        b'{"a": "unterminated, "id": 2',
        b"",
    ],
)
def test_no_id_is_made_up(line: bytes) -> None:
    assert line_id(line, line) is None


def test_an_id_after_a_head_longer_than_the_scan_is_read_at_the_end() -> None:
    big = b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"content": "'
    big += b"x" * (4 * SCAN_BYTES) + b'"}, "id": 42}'
    assert line_id(big[:SCAN_BYTES], big[-SCAN_BYTES:]) == 42
    nested = big.replace(b'"id": 42}', b'"inner": {"id": 43}}')
    assert line_id(nested[:SCAN_BYTES], nested[-SCAN_BYTES:]) is None


@pytest.mark.parametrize(
    ("line", "code", "ident"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', PARSE_ERROR, 1),
        (b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "x": "\xff"}', PARSE_ERROR, 2),
        (
            b'{"jsonrpc": "2.0", "id": 3, "p": ' + b"[" * TOO_DEEP + b"]" * TOO_DEEP + b"}",
            PARSE_ERROR,
            3,
        ),
        (b'{"id": 4, "method": "ping"}', INVALID_REQUEST, 4),
        (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', INVALID_REQUEST, 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": 6}', INVALID_REQUEST, 6),
        (b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": [7]}', INVALID_REQUEST, 7),
        (b'{"jsonrpc": "2.0", "id": 8}', INVALID_REQUEST, 8),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": false, "method": "ping"}', INVALID_REQUEST, None),
        (b"[]", INVALID_REQUEST, None),
        (b"42", INVALID_REQUEST, None),
    ],
)
def test_a_line_that_is_no_message_is_answered_to_its_id_when_there_is_one(
    line: bytes, code: int, ident: object
) -> None:
    malformed = parse_line(line)
    assert isinstance(malformed, Malformed)
    assert (malformed.code, malformed.id) == (code, ident)


def test_what_a_javascript_client_may_send_is_read_as_javascript_reads_it() -> None:
    line = b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"s": "\\ud800", "n": '
    line += b"9" * 5000 + b', "z": -0, "deep": ' + b"[" * 300 + b"]" * 300 + b"}}"
    message = parse_line(line)
    assert not isinstance(message, Malformed)
    params = message["params"]
    assert params["s"] == "\ud800"
    assert params["n"] == math.inf
    assert math.copysign(1, params["z"]) == -1


def test_responses_and_notifications_are_messages() -> None:
    for line in (
        b'{"jsonrpc": "2.0", "id": 1, "result": {}}',
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    ):
        assert not isinstance(parse_line(line), Malformed)


def test_a_lone_surrogate_is_encoded_as_an_escape_not_an_error() -> None:
    assert encode({"id": "\ud800", "text": "é"}) == b'{"id":"\\ud800","text":"\\u00e9"}\n'
    assert encode({"text": "é"}) == '{"text":"é"}\n'.encode()


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 5, "method": "x", ',
        b'{"method": "m", "params": {"id": 1, "a": [{"id": 2}]}, "id": "late" !',
        b'{"id": 3, "method": "tools/call", "params": {"content": "unterminated',
        b'{"method": "m", "id": 1.5}',
        b'{"method": 7, "id": 8',
    ],
)
def test_both_transports_find_the_same_id_in_a_request(line: bytes) -> None:
    method_is_a_string = b'"method": "' in line
    assert body_id(line) == (line_id(line, line) if method_is_a_string else None)
