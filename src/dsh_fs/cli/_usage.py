"""What the commands' modules (`_main`, `_http`, `_journal`) share about their command
lines: `UsageError`, and `size_type`, the parser of a size option."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

__all__ = ["UsageError", "size_type"]

_SIZE = re.compile(r"\A([0-9]+)\s*([KMGT]?)(?:I?B)?\Z", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class UsageError(Exception):
    """A bad command line; the message is the one line the user sees."""


def size_type(example: str, *, at_least: int = 0) -> Callable[[str], int]:
    """The argparse type of a size option: bytes, or a number with a K, M, G or T suffix
    (binary units, an ``iB`` or ``B`` after it allowed), at least `at_least` bytes; a bad
    one is refused naming `example` (e.g. ``1048576, 512K, 32M``)."""

    def parse(value: str) -> int:
        match = _SIZE.match(value.strip())
        if not match:
            raise argparse.ArgumentTypeError(f"invalid size {value!r} (e.g. {example})")
        size = int(match.group(1)) * _SIZE_UNITS[match.group(2).upper()]
        if size < at_least:
            raise argparse.ArgumentTypeError(
                f"{value!r} is too small (at least {_shown(at_least)})"
            )
        return size

    return parse


def _shown(size: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if size >= _SIZE_UNITS[unit] and size % _SIZE_UNITS[unit] == 0:
            return f"{size // _SIZE_UNITS[unit]}{unit}"
    return str(size)
