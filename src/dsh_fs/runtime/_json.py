"""Tool-call arguments from JSON text, with the numbers JavaScript's `JSON.parse` gives.

Python's `json` reads the integer token ``-0`` as ``0``; JavaScript reads it as a negative
zero, which upstream's runtime then refuses as not losslessly JSON-serializable. Parsing
with this hook keeps the negative zero, so `Context.execute` refuses it the same way
wherever the text is parsed by dsh-fs (the OpenAI adapter, the MCP transports).

An integer with more digits than Python converts (`sys.get_int_max_str_digits`, 4300 by
default) would make `json.loads` raise, so the whole message would fail to parse and the
request could get no answer. JavaScript reads such a number (any integer past about 1.8e308)
as an infinity, which upstream then refuses the same way; so does this parser.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

__all__ = ["parse_json"]


def _integer(token: str) -> int | float:
    # JSON has no leading zeros, so "-0" is the only integer token worth a negative zero.
    if token == "-0":
        return -0.0
    limit = sys.get_int_max_str_digits()
    if limit and len(token.lstrip("-")) > limit:
        return -math.inf if token.startswith("-") else math.inf
    return int(token)


def parse_json(text: str | bytes) -> Any:
    """Parse `text` as `json.loads` does, except that ``-0`` is the float ``-0.0`` and an
    integer with more digits than Python converts is an infinity of its sign.

    Raises:
        ValueError: `text` is not valid JSON (`json.JSONDecodeError`).
        RecursionError: the value is nested too deeply.
    """
    return json.loads(text, parse_int=_integer)
