"""Tool-call arguments from JSON text, with the numbers JavaScript's `JSON.parse` gives.

Python's `json` reads the integer token ``-0`` as ``0``; JavaScript reads it as a negative
zero, which upstream's runtime then refuses as not losslessly JSON-serializable; an integer
of thousands of digits, which Python refuses to convert, is Infinity there, refused the same
way. Parsing with these hooks keeps both, so `Context.execute` refuses them wherever the
text is parsed by dsh-fs (the OpenAI adapter, the MCP transports).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["parse_json"]


def _integer(token: str) -> int | float:
    # JSON has no leading zeros, so "-0" is the only integer token worth a negative zero.
    if token == "-0":
        return -0.0
    try:
        return int(token)
    except ValueError:  # more digits than Python converts: far past any double
        return -math.inf if token.startswith("-") else math.inf


# One decoder for every call: `json.loads` with a hook builds a new one per call, a third of
# the time of parsing a small MCP request.
_DECODER = json.JSONDecoder(parse_int=_integer)


def parse_json(text: str | bytes) -> Any:
    """Parse `text` as `json.loads` does, except that ``-0`` is the float ``-0.0`` and an
    integer with more digits than Python converts is an infinity (as JavaScript reads it).

    Raises:
        ValueError: `text` is not valid JSON (`json.JSONDecodeError`, or invalid UTF-8).
        RecursionError: the value is nested too deeply.
    """
    if not isinstance(text, str):
        text = text.decode(json.detect_encoding(text), "surrogatepass")  # as `json.loads`
    return _DECODER.decode(text)
