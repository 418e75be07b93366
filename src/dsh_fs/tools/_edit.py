"""The `edit` tool: the edit-intent decides the version guard, the provider replaces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FS, FsEditRequest
from dsh_fs.runtime import (
    AgentSession,
    Context,
    ToolAnnotations,
    ToolArgumentError,
    ToolExecution,
)

from ._arguments import EDIT_PARAMS, EditArguments, non_blank
from ._base import FsTool, guarded_edit
from ._edit_memory import EditMemory
from ._render import render_edit
from ._values import EditValue

__all__ = ["DESCRIPTION", "PROMPT", "EditTool"]

DESCRIPTION = (
    "Replace literal text in an existing UTF-8 text file. old_string must match the file "
    "exactly (line endings aside) and, unless replace_all is true, appear exactly once. Read "
    "the file first in this session (editing a file you have not read, or that changed since "
    "you read it, is refused), unless you just created or edited it."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal "
    "old_string with new_string; by default old_string must appear exactly once. If "
    "old_string appears multiple times, provide a more specific old_string or set replace_all "
    "to true. Read the file first (the default fs-observation-policy requires it), unless you "
    "just created or edited it in this session."
)
"""The tool's guidance section (SPEC §6, verbatim)."""


class EditTool(FsTool[EditArguments, EditValue]):
    """`edit(file_path, old_string, new_string, replace_all=False)`."""

    name = "edit"
    description = DESCRIPTION
    annotations = ToolAnnotations(title="Edit file", destructive=True, idempotent=False)
    params = EDIT_PARAMS

    def __init__(self, *, placeholders: bool = True) -> None:
        super().__init__()
        self.placeholders = placeholders
        """Refuse a new_string that stands for lines it deletes (SPEC §8.3)."""
        self._memory = EditMemory()

    def parse_values(self, raw: Mapping[str, Any]) -> EditArguments:
        """`file_path` not blank, `old_string` not empty, and the two strings different.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        old, new = raw["old_string"], raw["new_string"]
        if not old:
            raise ToolArgumentError("old_string must be a non-empty string")
        if old == new:
            raise ToolArgumentError("old_string and new_string must differ")
        return EditArguments(
            file_path=file_path,
            old_string=old,
            new_string=new,
            replace_all=raw.get("replace_all", False),
        )

    async def run(
        self, context: Context, execution: ToolExecution, args: EditArguments
    ) -> EditValue:
        """Ask the edit-intent for a version guard, edit, and record the new version.

        Raises:
            FsError: `FS_NOT_OBSERVED`, `FS_NOT_FOUND` (from the policy),
                `FS_PLACEHOLDER`, `FS_STALE_VERSION`, `FS_EDIT_NOT_FOUND`,
                `FS_AMBIGUOUS_EDIT`, and the provider's read and write errors.
        """
        request = FsEditRequest(
            old_string=args.old_string, new_string=args.new_string, replace_all=args.replace_all
        )
        try:
            target, outcome = await guarded_edit(
                context, execution, args.file_path, request, placeholders=self.placeholders
            )
        except FsError as error:
            if error.code is not FsErrorCode.EDIT_NOT_FOUND or execution.session is None:
                raise
            # The session's history explains what one file and one old_string cannot: the
            # same miss again, or text the session's own edit replaced (SPEC §8.3).
            raise await self._explained(context, execution.session, args, error) from None
        if execution.session is not None:
            self._memory.edited(execution.session, target, args.old_string, args.new_string)
        return EditValue(
            path=target.display_path,
            before=outcome.lazy_before,
            after=outcome.lazy_after,
            replacements=outcome.replacements,
            replace_all=args.replace_all,
        )

    async def _explained(
        self, context: Context, session: AgentSession, args: EditArguments, error: FsError
    ) -> FsError:
        """`error` with what the session's edits say about it; `error` itself when looking
        fails (the file went away meanwhile): the explanation never replaces the miss."""
        fs = context.get(FS)
        try:
            target = await fs.resolve(args.file_path, session.cwd)
            return await self._memory.missed(
                fs, session, target, args.file_path, args.old_string, error
            )
        except FsError:
            return error

    def render(self, value: EditValue) -> str:
        """One sentence (the replace_all variant when asked for every occurrence)."""
        return render_edit(value)

    def to_json(self, value: EditValue) -> dict[str, Any]:
        """``{path, before, after, replacements, replace_all}``."""
        return value.to_json()
