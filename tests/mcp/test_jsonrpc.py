"""Reading a POSTed JSON-RPC message as the library reads arguments (`mcp/http/_jsonrpc.py`)."""

from __future__ import annotations

import json
import math

import pydantic_core
import pytest

from dsh_fs.mcp._request_id import body_id
from dsh_fs.mcp.http._jsonrpc import Forward, Refusal, read_request

DEEP = "[" * 100_000 + "]" * 100_000


def call(arguments: str, request_id: str = "7", name: str = "write") -> bytes:
    return (
        '{"jsonrpc": "2.0", "id": ' + request_id + ', "method": "tools/call", '
        '"params": {"name": "' + name + '", "arguments": ' + arguments + "}}"
    ).encode()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"content": "x\\ud800y"}', {"content": "x\ud800y"}),
        ('{"content": ' + "[" * 300 + "]" * 300 + "}", None),
        ('{"content": ' + "9" * 5000 + "}", {"content": math.inf}),
        ('{"offset": -0}', {"offset": -0.0}),
        ('{"file_path": "a.txt"}', {"file_path": "a.txt"}),
    ],
)
def test_a_calls_arguments_are_taken_out_as_the_library_parses_them(
    arguments: str, expected: object
) -> None:
    outcome = read_request(call(arguments))
    assert isinstance(outcome, Forward)
    assert outcome.arguments == (expected if expected is not None else json.loads(arguments))
    if "offset" in arguments:
        assert outcome.arguments is not None
        offset = outcome.arguments["offset"]
        assert isinstance(offset, float)
        assert math.copysign(1, offset) == -1
    forwarded = pydantic_core.from_json(outcome.body)
    assert forwarded == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write"},
    }


def test_other_requests_are_forwarded_whole_as_strict_json() -> None:
    outcome = read_request(b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":-0}}')
    assert isinstance(outcome, Forward)
    assert outcome.arguments is None
    assert json.loads(outcome.body) == {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "ping",
        "params": {"x": -0.0},
    }


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        b'{"jsonrpc": "2.0", "id": 1,',
    ],
)
def test_what_has_no_id_to_answer_is_left_to_the_sdk(body: bytes) -> None:
    assert read_request(body) is None


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (call('{"content": ' + DEEP + "}"), -32700, "Parse error: nested too deeply"),
        (call("{}", name="w\\ud800"), -32602, "Invalid params: a string holds a lone surrogate"),
        (
            call("{}", name="w").replace(
                b'"params"',
                b'"extra": ' + DEEP[:600].encode() + DEEP[-600:].encode() + b', "params"',
            ),
            -32600,
            "Invalid Request: recursion limit exceeded",
        ),
        (call('{"content": "x"')[:-1], -32700, "Parse error: Expecting"),
    ],
)
def test_a_request_the_sdk_could_not_answer_is_refused_to_its_id(
    body: bytes, code: int, message: str
) -> None:
    outcome = read_request(body)
    assert isinstance(outcome, Refusal)
    assert outcome.reply.id == 7
    assert outcome.reply.error.code == code
    assert outcome.reply.error.message.startswith(message)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":'
            + DEEP.encode()
            + b"}}",
            5,
        ),
        (b'{"params":{"id":1,"method":"x","a":[{"id":2}]},"method":"m","id":"late"}', "late"),
        (b'{"id": 3, "method": "tools/call", "params": {"arguments": {"content": "unterminated', 3),
        (b'{"params": ' + DEEP.encode() + b', "id": 4, "method": "m"}', 4),
        (b'{"id": 1, "params": {}}', None),
        (b'{"method": "m", "id": null}', None),
        (b'{"method": "m", "id": 1.5}', None),
        (b'{"method": "m", "id": {"x": 1}}', None),
        (b"[1, 2]", None),
        (b"", None),
    ],
)
def test_the_id_of_a_request_that_did_not_parse_is_found_at_its_top_level(
    body: bytes, expected: object
) -> None:
    assert body_id(body) == expected
