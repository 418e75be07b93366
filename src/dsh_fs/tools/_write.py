"""The `write` tool: the write-intent decides the guard, the provider publishes atomically."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    BEFORE_LIMIT,
    FS,
    FS_WRITE_INTENT,
    CreateIfAbsent,
    FileSystem,
    FsFileType,
    FsIntent,
    FsTarget,
    Present,
    ReplaceIfVersion,
    WriteGuard,
)
from dsh_fs.runtime import Context, ToolAnnotations, ToolExecution

from ._arguments import WRITE_PARAMS, WriteArguments, non_blank
from ._base import FsTool, capture_for, observe, session_cwd
from ._placeholders import might_hold_placeholder, refuse_placeholder
from ._render import render_write
from ._values import WriteValue

__all__ = ["DESCRIPTION", "PROMPT", "WriteTool"]

DESCRIPTION = (
    "Create a file, or completely replace the content of an existing file. To overwrite an "
    "existing file, read it first in this session: overwriting a file you have not read (or "
    "that changed since you read it) is refused. Prefer edit for targeted changes."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the write tool to create files or completely replace file contents. Existing files "
    "are overwritten, so read an existing file first (the default fs-observation-policy "
    "requires it) and prefer edit for targeted changes."
)
"""The tool's guidance section (SPEC §6, verbatim)."""


class WriteTool(FsTool[WriteArguments, WriteValue]):
    """`write(file_path, content)`."""

    name = "write"
    description = DESCRIPTION
    annotations = ToolAnnotations(title="Write file", destructive=True, idempotent=True)
    params = WRITE_PARAMS

    def __init__(self, *, placeholders: bool = True) -> None:
        super().__init__()
        self.placeholders = placeholders
        """Refuse a content that stands for lines it deletes (SPEC §8.3)."""

    def parse_values(self, raw: Mapping[str, Any]) -> WriteArguments:
        """`file_path` not blank (any `content` is fine, the empty string included).

        Raises:
            ToolArgumentError: a blank `file_path`.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        return WriteArguments(file_path=file_path, content=raw["content"])

    async def run(
        self, context: Context, execution: ToolExecution, args: WriteArguments
    ) -> WriteValue:
        """Ask the write-intent for a guard, write, and record the new version.

        Raises:
            FsError: `FS_NOT_OBSERVED`, `FS_PLACEHOLDER`, `FS_STALE_VERSION` (from the
                guard), and the provider's write errors.
        """
        fs = context.get(FS)
        target = await fs.resolve(args.file_path, session_cwd(execution))
        guard = await context.events.waterfall(
            FS_WRITE_INTENT, FsIntent(target=target, actor=execution), None
        )
        if self.placeholders and might_hold_placeholder(args.content):
            prior = await _prior_text(fs, target, guard)
            if prior is not None:
                refuse_placeholder("write", target.display_path, prior, args.content)
        capture = await capture_for(context, execution, target)
        outcome = await fs.write_text(target, args.content, guard, capture=capture)
        await observe(context, execution, target, Present(outcome.version))
        return WriteValue(
            path=target.display_path,
            operation=outcome.operation,
            before=outcome.before,
            after=outcome.after,
        )

    def render(self, value: WriteValue) -> str:
        """Five lines ending in ``Created file`` or ``Updated file``."""
        return render_write(value)

    def to_json(self, value: WriteValue) -> dict[str, Any]:
        """``{path, operation, before, after}``."""
        return value.to_json()


async def _prior_text(fs: FileSystem, target: FsTarget, guard: WriteGuard | None) -> str | None:
    """The text a write is about to replace, for the placeholder guard: None when there is
    none to compare with (a create, a file over `BEFORE_LIMIT`, one that is not text or not
    readable here) or when the guard will refuse the write anyway (a file the session has
    not read, or no longer at the version it read: the write reports that, as it would
    without the placeholder guard).

    Only a content with a candidate line pays for this read (`might_hold_placeholder`).
    It happens before the provider's critical section: a change in between is what the
    write's version guard is for, and without one the guard looks at the text of a moment
    ago, which is all a heuristic needs."""
    if isinstance(guard, CreateIfAbsent):
        return None  # only a create may go through: an existing file is refused unread
    info = await fs.stat(target)
    if info is None or info.type is not FsFileType.FILE or info.size > BEFORE_LIMIT:
        return None
    if isinstance(guard, ReplaceIfVersion) and guard.version != info.version:
        return None
    try:
        return await fs.read_text(target)
    except FsError:
        return None
