"""What the MCP server says about itself, its tools and their results, as JSON data.

One source for both servers: the stdio server writes these dicts as they are, the SDK's
server (HTTP, and the 2026-07-28 era on stdio) validates them into its models. Nothing
here imports the SDK, so the stdio server starts without it.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Final

from dsh_fs._version import __version__
from dsh_fs.runtime import ToolAnnotations
from dsh_fs.tools import ImageValue

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Workspace

__all__ = [
    "CODE_META_KEY",
    "ERROR_META_KEY",
    "SERVER_DESCRIPTION",
    "SERVER_NAME",
    "SERVER_TITLE",
    "server_info",
    "tool_definitions",
    "tool_result",
]

CODE_META_KEY: Final = "dsh-fs/code"
"""`_meta` key of a failed call's machine-routable code (e.g. ``FS_STALE_VERSION``)."""
ERROR_META_KEY: Final = "dsh-fs/error"
"""`_meta` key of a failed call's error kind (``FsError``, ``ToolArgumentError``, …)."""

SERVER_NAME: Final = "dsh-fs"
SERVER_TITLE: Final = "dsh-fs"
SERVER_DESCRIPTION: Final = "Safe file tools: edits are refused on stale reads."


def server_info() -> dict[str, str]:
    """The ``serverInfo`` of an ``initialize`` result (an MCP ``Implementation``)."""
    return {
        "name": SERVER_NAME,
        "title": SERVER_TITLE,
        "version": __version__,
        "description": SERVER_DESCRIPTION,
    }


def _without_none(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}


def tool_definitions(workspace: Workspace) -> list[dict[str, Any]]:
    """The workspace's tools as MCP ``Tool`` objects: exact schemas and descriptions, and
    each tool's own annotations (hosts auto-approve read-only tools by them)."""
    tools = []
    for s in workspace.tool_schemas():
        tool = workspace.context.tools.get(s["name"])
        facts = tool.annotations if tool is not None else ToolAnnotations()
        annotations = _without_none(
            {
                "title": facts.title,
                "readOnlyHint": facts.read_only,
                "destructiveHint": None if facts.read_only else facts.destructive,
                "idempotentHint": None if facts.read_only else facts.idempotent,
                "openWorldHint": facts.open_world,
            }
        )
        tools.append(
            _without_none(
                {
                    "name": s["name"],
                    "title": facts.title,
                    "description": s["description"],
                    "inputSchema": s["parameters"],
                    "annotations": annotations,
                }
            )
        )
    return tools


def tool_result(result: ToolResult, *, structured: bool = False) -> dict[str, Any]:
    """The MCP ``CallToolResult`` of a tool result: the rendered text (an image read: one
    image content block, SPEC §10), ``isError``, a
    failure's code in ``_meta``, and with `structured` the canonical value (or
    ``{"error": …}``) as ``structuredContent``."""
    image = result.data
    content: dict[str, Any] = (
        {
            "type": "image",
            "data": base64.b64encode(image.data).decode("ascii"),
            "mimeType": image.mime_type,
        }
        if isinstance(image, ImageValue) and not result.is_error
        else {"type": "text", "text": result.text}
    )
    data: dict[str, Any] = {"content": [content], "isError": result.is_error}
    error = result.error
    if error is not None:
        data["_meta"] = {CODE_META_KEY: error["code"], ERROR_META_KEY: error["name"]}
    if structured:
        value = {"error": error} if error is not None else result.value
        if value is not None:
            data["structuredContent"] = value
    return data
