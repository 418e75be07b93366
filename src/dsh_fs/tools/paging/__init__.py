"""Read paging (SPEC §6): the window of lines `read` shows, and how it finds it fast.

`LineWindow` picks lines ``offset..`` out of a stream of decoded chunks, exactly and in
bounded memory, with the caps on lines, characters per line and bytes (`_window`;
`window_whole` windows one whole text, a plain short one at once);
`LineIndexes` remembers where chunks of a file start so a later page starts reading near
its offset (`_line_index`); `scan_window` streams a file through both (`_paging`). Pure
apart from the stream it reads; used by `read` and by any tool that pages a file.
"""

from ._line_index import LineIndexes
from ._paging import scan_window
from ._window import MAX_BYTES, MAX_LINE_CHARS, MAX_LINES, LineWindow, Window, window_whole

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "LineIndexes",
    "LineWindow",
    "Window",
    "scan_window",
    "window_whole",
]
