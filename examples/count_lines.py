"""A tool of your own on the public tool API: `count_lines(file_path)`, served by `dsh-fs mcp`.

dsh-fs mcp --plugin count_lines:CountLinesPlugin .   # with examples/ on PYTHONPATH
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.fs import FS
from dsh_fs.runtime import Context, Plugin, PluginScope, ToolAnnotations, ToolExecution
from dsh_fs.tools import FsTool, non_blank, session_cwd, string_param


class CountLinesTool(FsTool[str, dict[str, Any]]):
    name = "count_lines"
    description = "Count the lines of a UTF-8 text file without reading it into the context."
    annotations = ToolAnnotations(title="Count lines", read_only=True, destructive=False)
    params = (string_param("file_path", "Path of the file.", non_empty=True),)

    def parse_values(self, raw: Mapping[str, Any]) -> str:
        return non_blank(raw["file_path"], "file_path")

    async def run(self, context: Context, execution: ToolExecution, args: str) -> dict[str, Any]:
        fs = context.get(FS)
        target = await fs.resolve(args, session_cwd(execution))
        lines, last = 0, ""
        async with fs.stream_text(target) as chunks:  # bounded memory, any size
            async for chunk in chunks:
                lines, last = lines + chunk.count("\n"), chunk[-1:] or last
        return {"path": target.display_path, "lines": lines + (last not in ("", "\n"))}

    def render(self, value: dict[str, Any]) -> str:
        return f"{value['path']}: {value['lines']} lines"

    def to_json(self, value: dict[str, Any]) -> dict[str, Any]:
        return value


class CountLinesPlugin(Plugin[None]):
    name = "count-lines"

    def apply(self, scope: PluginScope, config: None) -> None:
        scope.register_tool(CountLinesTool())
