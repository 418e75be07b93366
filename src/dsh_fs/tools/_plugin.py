"""`FsToolsPlugin`: registers read, write, edit and edit_files and their guidance sections."""

from __future__ import annotations

from dsh_fs.runtime import Plugin, PluginScope, PromptSection

from . import _edit, _edit_files, _read, _write
from ._changeset import MAX_SET_BYTES
from ._image import MAX_IMAGE_BYTES

__all__ = ["FsToolsPlugin"]


class FsToolsPlugin(Plugin[None]):
    """The file tools (read, write, edit, edit_files) over the context's `fs` service.

    Apply with ``context.use(FsToolsPlugin(), None)`` after providing `FS`. The tools work
    with or without a policy plugin; without one they are unconstrained.
    """

    name = "fs-tools"

    def __init__(
        self,
        names: tuple[str, ...] = ("read", "write", "edit", "edit_files"),
        *,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        placeholders: bool = True,
        max_set_bytes: int = MAX_SET_BYTES,
    ) -> None:
        self.names = names
        """The tools registered."""
        self.max_image_bytes = max_image_bytes
        """The largest image `read` returns (bytes); a larger one is `FS_TOO_LARGE`."""
        self.placeholders = placeholders
        """`write` and `edit` refuse new text that stands for the lines it deletes
        (`FS_PLACEHOLDER`, SPEC §8.3); False turns the guard off."""
        self.max_set_bytes = max_set_bytes
        """The most UTF-8 bytes the files of one `edit_files` call may hold once edited."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Register the tools and their prompt sections (ids ``tools:<name>``)."""
        for tool, prompt in (
            (_read.ReadTool(max_image_bytes=self.max_image_bytes), _read.PROMPT),
            (_write.WriteTool(placeholders=self.placeholders), _write.PROMPT),
            (_edit.EditTool(placeholders=self.placeholders), _edit.PROMPT),
            (
                _edit_files.EditFilesTool(
                    placeholders=self.placeholders, max_bytes=self.max_set_bytes
                ),
                _edit_files.PROMPT,
            ),
        ):
            if tool.name not in self.names:
                continue
            scope.register_tool(tool)
            scope.add_prompt_section(PromptSection(id=f"tools:{tool.name}", text=prompt))
