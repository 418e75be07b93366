"""The `read` tool: a small file's `stat` and text in one call (a larger file: one `stat`,
a streamed read), the exact window, then `fs/observed`.

A large file's read reports its progress in bytes when the call has a progress reporter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS,
    Absent,
    FileSystem,
    FsFileType,
    FsInfo,
    FsTarget,
    FsVersion,
    Present,
    messages,
)
from dsh_fs.runtime import (
    Context,
    ToolAnnotations,
    ToolArgumentError,
    ToolExecution,
)

from ._arguments import READ_PARAMS, ReadArguments, js_number, non_blank, positive_integer
from ._base import FsTool, observe, session_cwd
from ._image import HEAD_BYTES, MAX_IMAGE_BYTES, parses, sniff
from ._render import render_image, render_read
from ._values import ImageValue, ReadValue
from .paging import MAX_LINE_CHARS, MAX_LINES, LineIndexes, scan_window, window_whole

__all__ = ["DESCRIPTION", "PROMPT", "WHOLE_READ_BYTES", "ReadTool"]

WHOLE_READ_BYTES = 64 * 1024
"""Files up to this size (by the read's `stat`) are read whole, by the `stat` itself
(`read_small`), instead of streamed: a stream costs several worker-thread hops where a
small read needs none or one (`bench/small_read.py` measures it). A file that grows past
this between the `stat` and the read is still read whole, once."""

CONFIRM_BYTES = 16 * 1024 * 1024
"""The largest file a refused read observes as not text (`ReadTool._observe_not_text`)."""

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


class ReadTool(FsTool[ReadArguments, "ReadValue | ImageValue"]):
    """`read(file_path, offset=1, limit=2000)`; an image (PNG, JPEG, GIF, WebP, by
    content) is returned whole as an `ImageValue` (SPEC §10)."""

    name = "read"
    description = DESCRIPTION
    annotations = ToolAnnotations(
        title="Read file", read_only=True, destructive=False, idempotent=True
    )
    params = READ_PARAMS

    def __init__(
        self, line_indexes: LineIndexes | None = None, *, max_image_bytes: int = MAX_IMAGE_BYTES
    ) -> None:
        """`line_indexes`: where this tool keeps the line indexes of large files it scanned
        (one per workspace); a fresh one by default. `max_image_bytes`: the largest image
        returned (5 MiB by default); a larger one is `FS_TOO_LARGE`."""
        super().__init__()
        if max_image_bytes < 0:
            raise ValueError(f"max_image_bytes must not be negative, got {max_image_bytes}")
        self._line_indexes = line_indexes if line_indexes is not None else LineIndexes()
        self.max_image_bytes = max_image_bytes
        """The largest image this tool returns, in bytes."""

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
        return ReadArguments(
            file_path=file_path,
            offset=offset,
            limit=limit,
            windowed="offset" in raw or "limit" in raw,
        )

    async def run(
        self, context: Context, execution: ToolExecution, args: ReadArguments
    ) -> ReadValue | ImageValue:
        """Stat once, stream and window the text, and record what was observed. A file
        that is not text but an image (its signature and header parse) is returned whole.

        Raises:
            FsError: `FS_NOT_FOUND` (missing file, or offset past the end),
                `FS_NOT_REGULAR_FILE`, `FS_NOT_TEXT`, `FS_TOO_LARGE` (an image over the
                cap), and the provider's other errors.
            ToolArgumentError: `offset` or `limit` with an image.
        """
        fs = context.get(FS)
        target = await fs.resolve(args.file_path, session_cwd(execution))
        path = target.display_path
        try:
            # A small file is stat-ed and read in one call (one open file for both).
            small = await fs.read_small(target, WHOLE_READ_BYTES)
        except FsError as error:
            if error.code is not FsErrorCode.NOT_TEXT:
                raise
            # Not text: the stat an image is judged and observed by (the read's was not
            # returned with its error).
            info = await fs.stat(target)
            if info is None or info.type is not FsFileType.FILE:
                raise  # replaced since: the read's answer stands
            return await self._image_read(context, execution, fs, target, info, args, error)
        if small is None:
            await observe(context, execution, target, Absent())
            raise messages.not_found("read", path)
        info = small.info
        if info.type is not FsFileType.FILE:
            # Never opened: a FIFO or a device must not block the call.
            raise messages.not_regular_file("read", path)
        try:
            if small.decoded is not None:
                result = window_whole(small.decoded.text, args.offset, args.limit)
                encoding = small.decoded.encoding
            else:
                result, encoding = await scan_window(
                    fs,
                    target,
                    info,
                    args.offset,
                    args.limit,
                    self._line_indexes,
                    execution.progress,
                )
        except FsError as error:
            if error.code is not FsErrorCode.NOT_TEXT:
                raise
            return await self._image_read(context, execution, fs, target, info, args, error)
        if result.out_of_range:
            raise FsError(
                FsErrorCode.NOT_FOUND,
                f'offset {js_number(args.offset)} is out of range for "{path}" '
                f"({result.total_lines} lines)",
                path=path,
            )
        await observe(context, execution, target, Present(info.version))
        return ReadValue(
            path=path,
            offset=result.offset,
            lines=result.lines,
            total_lines=result.total_lines,
            output_capped=result.output_capped,
            encoding=encoding.codec,
            bom=encoding.bom,
        )

    async def _image_read(
        self,
        context: Context,
        execution: ToolExecution,
        fs: FileSystem,
        target: FsTarget,
        info: FsInfo,
        args: ReadArguments,
        binary: FsError,
    ) -> ImageValue:
        """`_image`, observed at the version it was read at.

        Raises:
            FsError: as `_image`.
            ToolArgumentError: as `_image`.
        """
        try:
            image = await self._image(fs, target, info, args, binary)
        except FsError as error:
            if error is binary:
                await self._observe_not_text(context, execution, fs, target, info)
            elif error.code is FsErrorCode.TOO_LARGE:
                # An image over the cap, judged by the stat `info`: the refusal told the
                # caller what is there (a newer file is stale at `info`'s version), and no
                # read of it can succeed, so a delete, move or write must not need one.
                await observe(context, execution, target, Present(info.version))
            raise
        await observe(context, execution, target, Present(image.version))
        return image.value

    async def _observe_not_text(
        self,
        context: Context,
        execution: ToolExecution,
        fs: FileSystem,
        target: FsTarget,
        info: FsInfo,
    ) -> None:
        """Record that the caller saw the file at `info`'s version as not text (binary, or
        no text in its encoding), when a read at that version says so again: the refusal
        told the caller what is there, so a delete, move or write of it needs no read that
        can never succeed (`FS_NOT_OBSERVED` said "read the file, then retry"). Observed at
        `info`'s version (a `stat` right after the refusal) only where a second look finds
        the file not text at that version: a file that became text is not observed, one
        changed after the look is stale at `info`'s version. Up to
        `CONFIRM_BYTES` by a read at the version (which holds the file whole); a larger
        file by a stream the provider vouches is of that version (read to where it stops
        being text: the first chunk, for a binary file)."""
        vouched: FsVersion | None = None
        try:
            if info.size <= CONFIRM_BYTES:
                await fs.read_decoded_at(target, info.version)
                return  # text at that version now, or another version: not observed
            async with fs.stream_text_from(target) as stream:
                vouched = stream.version
                async for _ in stream:
                    pass
        except FsError as error:
            if error.code is FsErrorCode.NOT_TEXT and (
                info.size <= CONFIRM_BYTES or vouched == info.version
            ):
                await observe(context, execution, target, Present(info.version))

    async def _image(
        self, fs: FileSystem, target: FsTarget, info: FsInfo, args: ReadArguments, binary: FsError
    ) -> _Image:
        """The image at `target`, which is not text: its head sniffed (never more read for
        a file over the cap), then its bytes, at most the cap, and its whole header checked.

        Raises:
            FsError: `binary` again when it is no image; `FS_TOO_LARGE` over the cap.
            ToolArgumentError: `offset` or `limit` was given.
        """
        path = target.display_path
        try:
            head = await fs.read_head(target, HEAD_BYTES)
        except FsError as error:
            if error.code is FsErrorCode.TOO_LARGE:  # a provider without ranged reads
                raise binary from None
            raise
        mime_type = sniff(head)
        if mime_type is None:
            raise binary
        if args.windowed:
            raise ToolArgumentError(
                f"offset and limit cannot be used with an image ({mime_type}); read it without them"
            )
        if info.size > self.max_image_bytes:
            raise messages.image_too_large(path, info.size, self.max_image_bytes)
        try:
            data = await fs.read_bytes(target, self.max_image_bytes)
        except FsError as error:
            if error.code is FsErrorCode.TOO_LARGE:  # it grew past the cap since the stat
                raise messages.image_too_large(path, info.size, self.max_image_bytes) from None
            raise
        if not parses(mime_type, data):
            raise binary
        value = ImageValue(path=path, mime_type=mime_type, size=len(data), data=data)
        return _Image(value=value, version=info.version)

    def render(self, value: ReadValue | ImageValue) -> str:
        """The SPEC §6 read block, or for an image its path, type and size."""
        if isinstance(value, ImageValue):
            return render_image(value)
        return render_read(value)

    def to_json(self, value: ReadValue | ImageValue) -> dict[str, Any]:
        """``{path, offset, lines: [{number, text}], total_lines, output_capped, encoding,
        bom}``, or ``{path, mime_type, size}`` for an image."""
        return value.to_json()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Image:
    """An image read, and the version it was read at."""

    value: ImageValue
    version: FsVersion
