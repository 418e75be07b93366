"""`FsToolsPlugin`: registers read, write and edit and their guidance sections."""

from __future__ import annotations

from dsh_fs.runtime import Plugin, PluginScope, PromptSection

from . import _edit, _read, _write
from ._image import MAX_IMAGE_BYTES

__all__ = ["FsToolsPlugin"]


class FsToolsPlugin(Plugin[None]):
    """The three file tools over the context's `fs` service.

    Apply with ``context.use(FsToolsPlugin(), None)`` after providing `FS`. The tools work
    with or without a policy plugin; without one they are unconstrained.
    """

    name = "fs-tools"

    def __init__(
        self,
        names: tuple[str, ...] = ("read", "write", "edit"),
        *,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        placeholders: bool = True,
    ) -> None:
        self.names = names
        """The tools registered."""
        self.max_image_bytes = max_image_bytes
        """The largest image `read` returns (bytes); a larger one is `FS_TOO_LARGE`."""
        self.placeholders = placeholders
        """`write` and `edit` refuse new text that stands for the lines it deletes
        (`FS_PLACEHOLDER`, SPEC §8.3); False turns the guard off."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Register the tools and their prompt sections (ids ``tools:<name>``)."""
        for tool, prompt in (
            (_read.ReadTool(max_image_bytes=self.max_image_bytes), _read.PROMPT),
            (_write.WriteTool(placeholders=self.placeholders), _write.PROMPT),
            (_edit.EditTool(placeholders=self.placeholders), _edit.PROMPT),
        ):
            if tool.name not in self.names:
                continue
            scope.register_tool(tool)
            scope.add_prompt_section(PromptSection(id=f"tools:{tool.name}", text=prompt))
