"""The `read` tool: one `stat`, a streamed read, the exact window, then `fs/observed`.

A large file's read reports its progress in bytes when the call has a progress reporter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FS, Absent, FsFileType, Present, messages
from dsh_fs.runtime import (
    Context,
    ToolAnnotations,
    ToolArgumentError,
    ToolExecution,
)

from ._arguments import READ_PARAMS, ReadArguments, js_number, non_blank, positive_integer
from ._base import FsTool, observe, session_cwd
from ._render import render_read
from ._values import ReadValue
from .paging import MAX_LINE_CHARS, MAX_LINES, LineIndexes, LineWindow, scan_window

__all__ = ["DESCRIPTION", "PROMPT", "WHOLE_READ_BYTES", "ReadTool"]

WHOLE_READ_BYTES = 64 * 1024
"""Files up to this size (by the read's `stat`) are read with one `read_text` instead of a
stream: a stream costs several worker-thread hops where a small `read_text` needs none or
one (`bench/small_read.py` measures it). A file that grows past this between the `stat` and
the read is still read whole, once."""

DESCRIPTION = (
    "Read a UTF-8 text file. The result shows numbered lines (`<n>: <text>`), at most "
    f"{MAX_LINES} lines and 50 KiB per call; lines longer than {MAX_LINE_CHARS} characters "
    "are truncated. Use offset and limit to continue reading a large file. Reading a file "
    "(any part of it) is what allows you to overwrite it with write or change it with edit "
    "afterwards."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the read tool — not shell commands like cat — to inspect text files. Results "
    "include line numbers. Use offset and limit to continue reading large files."
)
"""The tool's guidance section (SPEC §6, verbatim)."""


class ReadTool(FsTool[ReadArguments, ReadValue]):
    """`read(file_path, offset=1, limit=2000)`."""

    name = "read"
    description = DESCRIPTION
    annotations = ToolAnnotations(
        title="Read file", read_only=True, destructive=False, idempotent=True
    )
    params = READ_PARAMS

    def __init__(self, line_indexes: LineIndexes | None = None) -> None:
        """`line_indexes`: where this tool keeps the line indexes of large files it scanned
        (one per workspace); a fresh one by default."""
        super().__init__()
        self._line_indexes = line_indexes if line_indexes is not None else LineIndexes()

    def parse_values(self, raw: Mapping[str, Any]) -> ReadArguments:
        """`file_path` not blank; `offset` and `limit` whole numbers of at least 1, `limit` at
        most 2000. An offset past the end is the out-of-range error, not an argument error.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        offset = positive_integer(raw["offset"], "offset") if "offset" in raw else 1
        limit = positive_integer(raw["limit"], "limit") if "limit" in raw else MAX_LINES
        if limit > MAX_LINES:
            raise ToolArgumentError(f"limit must be less than or equal to {MAX_LINES}")
        return ReadArguments(file_path=file_path, offset=offset, limit=limit)

    async def run(
        self, context: Context, execution: ToolExecution, args: ReadArguments
    ) -> ReadValue:
        """Stat once, stream and window the text, and record what was observed.

        Raises:
            FsError: `FS_NOT_FOUND` (missing file, or offset past the end),
                `FS_NOT_REGULAR_FILE`, `FS_NOT_TEXT`, and the provider's other errors.
        """
        fs = context.get(FS)
        target = await fs.resolve(args.file_path, session_cwd(execution))
        path = target.display_path
        info = await fs.stat(target)
        if info is None:
            observe(context, execution, target, Absent())
            raise messages.not_found("read", path)
        if info.type is not FsFileType.FILE:
            # Never opened: a FIFO or a device must not block the call.
            raise messages.not_regular_file("read", path)
        if info.size <= WHOLE_READ_BYTES:
            window = LineWindow(args.offset, args.limit)
            window.feed(await fs.read_text(target))
            result = window.finish()
        else:
            result = await scan_window(
                fs, target, info, args.offset, args.limit, self._line_indexes, execution.progress
            )
        if result.out_of_range:
            raise FsError(
                FsErrorCode.NOT_FOUND,
                f'offset {js_number(args.offset)} is out of range for "{path}" '
                f"({result.total_lines} lines)",
                path=path,
            )
        observe(context, execution, target, Present(info.version))
        return ReadValue(
            path=path,
            offset=result.offset,
            lines=result.lines,
            total_lines=result.total_lines,
            output_capped=result.output_capped,
        )

    def render(self, value: ReadValue) -> str:
        """The SPEC §6 read block."""
        return render_read(value)

    def to_json(self, value: ReadValue) -> dict[str, Any]:
        """``{path, offset, lines: [{number, text}], total_lines, output_capped}``."""
        return value.to_json()
