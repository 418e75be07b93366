"""Tool-call arguments from JSON text, with the numbers JavaScript's `JSON.parse` gives.

Python's `json` reads the integer token ``-0`` as ``0``; JavaScript reads it as a negative
zero, which upstream's runtime then refuses as not losslessly JSON-serializable. Parsing
with this hook keeps the negative zero, so `Context.execute` refuses it the same way
wherever the text is parsed by dsh-fs (the OpenAI adapter, the MCP stdio transport).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_json"]


def _integer(token: str) -> int | float:
    # JSON has no leading zeros, so "-0" is the only integer token worth a negative zero.
    return -0.0 if token == "-0" else int(token)


def parse_json(text: str | bytes) -> Any:
    """Parse `text` as `json.loads` does, except that ``-0`` is the float ``-0.0``.

    Raises:
        ValueError: `text` is not valid JSON (`json.JSONDecodeError`), or an integer has more
            digits than Python converts.
        RecursionError: the value is nested too deeply.
    """
    return json.loads(text, parse_int=_integer)
