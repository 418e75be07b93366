"""`parse_json`: JSON text to arguments with JavaScript's numbers (``-0`` stays negative)."""

from __future__ import annotations

import json
import math

import pytest

from dsh_fs.runtime import Context, parse_json

pytestmark = pytest.mark.anyio

LOSSY = "Error: tool execution arguments must be losslessly JSON-serializable"


@pytest.mark.parametrize("text", ["-0", "[-0]", '{"a": {"b": -0}}', "-0.0", "-0e3"])
def test_a_negative_zero_stays_negative_wherever_it_is(text: str) -> None:
    value = parse_json(text)
    while not isinstance(value, float):
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
    assert value == 0
    assert math.copysign(1, value) == -1


@pytest.mark.parametrize(
    "text", ["0", "7", "-7", "100000000000000000000", '"-0"', "2.5", '{"a": [1, -1, null]}']
)
def test_everything_else_parses_as_json_loads_parses_it(text: str) -> None:
    value = parse_json(text)
    assert value == json.loads(text)
    assert type(value) is type(json.loads(text))


def test_invalid_json_is_a_json_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_json("{oops")


async def test_an_integer_negative_zero_is_refused_like_upstream_before_the_tool_lookup() -> None:
    result = await Context().execute("nope", parse_json('{"x": -0}'))
    assert (result.code, result.text) == ("INVALID_ARGS", LOSSY)


@pytest.mark.parametrize(("sign", "infinity"), [("", math.inf), ("-", -math.inf)])
def test_an_integer_too_long_for_python_is_an_infinity_as_javascript_reads_it(
    sign: str, infinity: float
) -> None:
    assert parse_json(f"[{sign}{'9' * 5000}]") == [infinity]


async def test_an_integer_of_five_thousand_digits_is_refused_like_upstream() -> None:
    result = await Context().execute("nope", parse_json('{"x": %s}' % ("1" * 5000)))
    assert (result.code, result.text) == ("INVALID_ARGS", LOSSY)
