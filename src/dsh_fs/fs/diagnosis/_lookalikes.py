"""Characters a model confuses with ASCII, and the folding that makes two lines comparable.

A model copies text through a tokenizer and its own habits: curly quotes become straight
ones (or the reverse), a non-breaking space becomes a space, an en dash a hyphen, and
invisible characters (a zero-width space, a byte order mark) vanish. The edit never folds
anything (matching is literal); the diagnosis folds both sides to find the text the model
meant, then names each confused character.
"""

from __future__ import annotations

import unicodedata

__all__ = ["LOOKALIKES", "describe_char", "fold_key", "is_lookalike_pair"]

_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
_SPACES += "\u202f\u205f\u3000"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"

LOOKALIKES: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    "\u2026": "...",
    **dict.fromkeys(_SPACES, " "),
    **dict.fromkeys(_INVISIBLE, ""),
}
"""Each confusable character and the ASCII text a model types for it (empty: nothing)."""

# The alignment key of a line: no whitespace at all (indentation, trailing blanks and spacing
# are reported separately) and every look-alike folded to its ASCII twin.
_KEY_TABLE: dict[int, str | None] = {
    **{ord(char): None for char in " \t\r\f\v" + _SPACES + _INVISIBLE},
    **{ord(char): ascii_ for char, ascii_ in LOOKALIKES.items() if ascii_.strip()},
}


def fold_key(line: str) -> str:
    """`line` without whitespace or invisible characters, look-alikes folded to ASCII, and
    letters composed one way (Unicode NFC)."""
    if not line.isascii():
        line = unicodedata.normalize("NFC", line)
    return line.translate(_KEY_TABLE)


def is_lookalike_pair(file_text: str, old_text: str) -> bool:
    """Whether two differing fragments are the same text once look-alikes are folded, with
    at least one look-alike involved (plain whitespace differences are not look-alikes)."""
    if file_text == old_text:
        return False
    if not (file_text + old_text).isascii() and unicodedata.normalize(
        "NFC", file_text
    ) == unicodedata.normalize("NFC", old_text):
        return True
    if not any(char in LOOKALIKES for char in file_text + old_text):
        return False
    return _fold(file_text) == _fold(old_text)


def _fold(text: str) -> str:
    return "".join(LOOKALIKES.get(char, char) for char in text)


def describe_char(char: str) -> str:
    """``’ (U+2019 RIGHT SINGLE QUOTATION MARK)``; an invisible or space character is
    named without being shown."""
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    label = f"{code} {name}" if name else code
    if char == "\ufeff":
        label += ", a byte order mark"
    if char.isspace() or char in _INVISIBLE or not char.isprintable():
        return label
    return f"{char} ({label})"
