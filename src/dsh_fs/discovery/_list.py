"""The `list` tool: one directory's entries, hidden ones included, in name order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.fs import messages
from dsh_fs.runtime import Context, ToolAnnotations, ToolExecution

from ._arguments import LIST_PARAMS, ListArguments, optional_path
from ._render import MAX_ENTRIES, render_list
from ._searching import SearchTool, locate
from ._values import ListEntry, ListValue

__all__ = ["DESCRIPTION", "PROMPT", "ListTool"]

DESCRIPTION = (
    "List the entries of one directory (not recursive), hidden ones included, in name "
    'order: directories end with "/", symbolic links with "@". At most '
    f"{MAX_ENTRIES} entries. Use glob to find files across a tree."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the list tool — not shell ls — to see what one directory contains. It is not "
    "recursive: use glob to find files across a tree."
)
"""The tool's guidance section."""


class ListTool(SearchTool[ListArguments, ListValue]):
    """`list(path=None)`."""

    name = "list"
    description = DESCRIPTION
    annotations = ToolAnnotations(
        title="List directory", read_only=True, destructive=False, idempotent=True
    )
    params = LIST_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> ListArguments:
        """`path` not blank.

        Raises:
            ToolArgumentError: the rule broken.
        """
        return ListArguments(path=optional_path(raw.get("path")))

    async def run(
        self, context: Context, execution: ToolExecution, args: ListArguments
    ) -> ListValue:
        """List the directory (metadata only; nothing is opened or followed).

        Raises:
            FsError: `FS_NOT_FOUND`, `FS_NOT_DIRECTORY`, `FS_SANDBOX_DENIED`, and the
                provider's other errors.
        """
        where = await locate(context, execution, args.path)
        listing = await where.fs.list_dir_first(where.target, MAX_ENTRIES)
        return ListValue(
            path=messages.shown(where.target.display_path),
            entries=tuple(
                ListEntry(name=messages.shown(child.name), type=child.type.value, size=child.size)
                for child in listing.entries
            ),
            total=listing.total,
        )

    def render(self, value: ListValue) -> str:
        """The ``<path>``, ``<type>`` and ``<entries>`` block."""
        return render_list(value)

    def to_json(self, value: ListValue) -> dict[str, Any]:
        """``{path, entries: [{name, type, size}], total}``."""
        return value.to_json()
