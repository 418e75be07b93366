"""`EncodedText`: text held as its UTF-8 bytes, decoded only when someone asks for it.

An edit's outcome carries the text before and after it. For a 100 MB file, holding both as
`str` (up to 4 bytes a character) beside the bytes read and written cost about five times
the file. Held as bytes, `after` is mostly slices of `before`'s buffer, and a caller that
never looks at the text (a model loop, an MCP server) never pays for decoding it.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Sequence
from typing import TypeAlias

__all__ = ["Buffer", "EncodedText", "TextLike", "text_of"]

Buffer: TypeAlias = bytes | bytearray | memoryview
"""A piece of encoded text."""


class EncodedText:
    """Valid UTF-8 text as a sequence of byte pieces; `text` decodes them once, on demand.

    Args:
        parts: The pieces, in order; together they are valid UTF-8 (the maker checked).
        text: The same content as `str`, when the maker already has it.
    """

    __slots__ = ("_parts", "_size", "_text")

    def __init__(self, parts: Iterable[Buffer], *, text: str | None = None) -> None:
        self._parts: tuple[Buffer, ...] = tuple(p for p in parts if len(p))
        self._size = sum(memoryview(p).nbytes for p in self._parts)
        self._text = text

    @classmethod
    def of(cls, text: str) -> EncodedText:
        """`text` with its encoding.

        Raises:
            UnicodeEncodeError: `text` has no UTF-8 form (a lone surrogate).
        """
        return cls((text.encode("utf-8"),), text=text)

    @property
    def parts(self) -> Sequence[Buffer]:
        """The encoded pieces, in order (views may share a buffer with other values)."""
        return self._parts

    @property
    def size(self) -> int:
        """Length in bytes."""
        return self._size

    @property
    def text(self) -> str:
        """The decoded text (decoded on first access, then kept)."""
        if self._text is None:
            if len(self._parts) == 1:
                self._text = str(self._parts[0], "utf-8")
            else:
                decoder = codecs.getincrementaldecoder("utf-8")("strict")
                self._text = "".join(decoder.decode(part) for part in self._parts)
        return self._text

    @property
    def decoded(self) -> str | None:
        """The text if it is at hand (given, or decoded already), else None."""
        return self._text

    def to_bytes(self) -> bytes:
        """The encoding as one `bytes` object (a copy unless it is one `bytes` piece)."""
        if len(self._parts) == 1 and type(self._parts[0]) is bytes:
            return self._parts[0]
        return b"".join(self._parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedText):
            return self._size == other._size and self.to_bytes() == other.to_bytes()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedText({self._size} bytes)"


TextLike: TypeAlias = str | EncodedText
"""Text an outcome holds: decoded already, or as its encoding."""


def text_of(value: TextLike) -> str:
    """`value` as `str` (decoding an `EncodedText` on first use)."""
    return value if isinstance(value, str) else value.text
