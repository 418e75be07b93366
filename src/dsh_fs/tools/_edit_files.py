"""The `edit_files` tool (SPEC §13): several edits, one file or many, all or nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.fs import FsEditRequest
from dsh_fs.runtime import Context, ToolAnnotations, ToolArgumentError, ToolExecution

from ._arguments import (
    EDIT_FILES_PARAMS,
    EDIT_PARAMS,
    MAX_SET_EDITS,
    EditFilesArguments,
    check_shape,
)
from ._base import FsTool
from ._changeset import MAX_SET_BYTES, ChangeSet
from ._edit import edit_arguments
from ._render import render_edit_files
from ._values import EditFilesValue

__all__ = ["DESCRIPTION", "PROMPT", "EditFilesTool"]

DESCRIPTION = (
    "Make several literal replacements, in one file or across several UTF-8 text files, all "
    "or nothing: each edit is as for edit (old_string must match exactly and, unless "
    "replace_all is true, appear exactly once), edits to the same file apply in order, and if "
    "any edit fails no file changes. Read every file first in this session (a file you have "
    "not read, or that changed since you read it, is refused), unless you just created or "
    "edited it."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the edit_files tool for one logical change across several places (a rename across "
    "files, a signature and its callers): it applies every edit or none. Each edit is as for "
    "edit; edits to the same file apply in order, each to the result of the previous one. "
    "Read each file first (the default fs-observation-policy requires it)."
)
"""The tool's guidance section."""


class EditFilesTool(FsTool[EditFilesArguments, EditFilesValue]):
    """`edit_files(edits=[{file_path, old_string, new_string, replace_all?}, …])`."""

    name = "edit_files"
    description = DESCRIPTION
    annotations = ToolAnnotations(title="Edit files", destructive=False, idempotent=False)
    params = EDIT_FILES_PARAMS

    def __init__(self, *, placeholders: bool = True, max_bytes: int = MAX_SET_BYTES) -> None:
        super().__init__()
        self.placeholders = placeholders
        """Refuse a new_string that stands for lines it deletes (SPEC §8.3)."""
        self.max_bytes = max_bytes
        """The most UTF-8 bytes the files of one set may hold once edited."""

    def parse_values(self, raw: Mapping[str, Any]) -> EditFilesArguments:
        """1 to `MAX_SET_EDITS` edits, each of `edit`'s shape and value rules (a problem is
        named with the edit's position: ``edit <i> of <n>: …``).

        Raises:
            ToolArgumentError: the first rule broken.
        """
        edits = raw["edits"]
        count = len(edits)
        if count == 0:
            raise ToolArgumentError("edits must hold at least one edit")
        if count > MAX_SET_EDITS:
            raise ToolArgumentError(
                f"edits must hold at most {MAX_SET_EDITS} edits (the limit of one call), "
                f"got {count}"
            )
        parsed = []
        for index, item in enumerate(edits, 1):
            try:
                if not isinstance(item, Mapping):
                    raise ToolArgumentError("invalid arguments: the edit must be an object")
                check_shape(item, EDIT_PARAMS)
                parsed.append(edit_arguments(item))
            except ToolArgumentError as error:
                raise ToolArgumentError(f"edit {index} of {count}: {error.message}") from None
        return EditFilesArguments(edits=tuple(parsed))

    async def run(
        self, context: Context, execution: ToolExecution, args: EditFilesArguments
    ) -> EditFilesValue:
        """Stage every edit (nothing written until all apply), then publish file by file,
        each under its version guard, rolling back on a concurrent change.

        Raises:
            FsError: the first failing edit's error, prefixed ``edit <i> of <n> ("<p>"): ``.
            ToolArgumentError: the edited files are over the size bound.
        """
        changes = ChangeSet(
            context,
            execution,
            len(args.edits),
            placeholders=self.placeholders,
            max_bytes=self.max_bytes,
        )
        await changes.prefetch([edit.file_path for edit in args.edits])
        for index, edit in enumerate(args.edits, 1):
            request = FsEditRequest(
                old_string=edit.old_string,
                new_string=edit.new_string,
                replace_all=edit.replace_all,
            )
            await changes.stage(index, edit.file_path, request)
        changes.check_size()
        files = await changes.publish()
        return EditFilesValue(files=files, group=changes.group if changes.journaled else None)

    def render(self, value: EditFilesValue) -> str:
        """``Edited <k> files (<m> replacements)`` and one ``- <p>`` line per file."""
        return render_edit_files(value)

    def to_json(self, value: EditFilesValue) -> dict[str, Any]:
        """``{files, replacements, group}``."""
        return value.to_json()
