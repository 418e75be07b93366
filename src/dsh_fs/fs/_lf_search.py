"""Finding an LF-normalized needle in text that may use CRLF, without normalizing the text.

The literal edit and its diagnosis both define a match on the text with every CRLF read as
LF (SPEC §3). Building that text would copy the whole file; instead, a needle that spans a
line break is searched in the original text with a pattern accepting CRLF or LF at each
break.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["crlf_tolerant_pattern", "has_crlf"]


def has_crlf(text: str) -> bool:
    """Whether `text` contains a CRLF pair."""
    # One-character search first: `in` for a two-character needle is an order of magnitude
    # slower on text stored two bytes per character.
    return "\r" in text and "\r\n" in text


def crlf_tolerant_pattern(needle: str) -> re.Pattern[str]:
    """A pattern matching `needle` (LF line breaks) with CRLF or LF at each line break.

    A CR of `needle` is a lone CR of the normalized text, never the CR of a CRLF pair (which
    reads as LF): a break right after one is a CRLF in the text (CR, then CRLF), never an LF
    alone, and one at the very end of `needle` must not be followed by an LF.
    """
    parts = needle.split("\n")
    body = re.escape(parts[0])
    for before, part in itertools.pairwise(parts):
        body += (r"\r\n" if before.endswith("\r") else r"\r?\n") + re.escape(part)
    if needle.endswith("\r"):
        body += r"(?!\n)"
    return re.compile(body)
