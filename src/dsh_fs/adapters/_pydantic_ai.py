"""pydantic-ai: the workspace's tools as a toolset, with our schemas and our words.

`WorkspaceToolset` is an `AbstractToolset` whose tools are the workspace's, described by
our JSON Schemas and descriptions, run in one `Session` (the observation owner): pass one
per conversation, e.g. ``agent.run(prompt, toolsets=[WorkspaceToolset(session)])``. A
failure reaches the model as a failed tool result with our text (`ToolFailed`: the model
adapts, e.g. reads the file again, and no retry budget is spent). Arguments are checked by
our tools, with our messages. Needs ``pip install 'dsh-fs[pydantic-ai]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai import BinaryContent, RunContext, ToolDefinition, ToolFailed
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from ._images import image_of

if TYPE_CHECKING:
    from dsh_fs.workspace import Session

__all__ = ["WorkspaceToolset"]

_ANY_OBJECT = SchemaValidator(core_schema.dict_schema(core_schema.str_schema()))
"""Our tools check their own arguments, with the messages the model knows."""


class WorkspaceToolset(AbstractToolset[Any]):
    """The workspace's tools for a pydantic-ai agent, owned by one `Session`.

    Args:
        session: The observation owner (one per conversation).
        id: The toolset's id (pydantic-ai uses it for durable execution); ``dsh-fs`` by
            default.
    """

    def __init__(self, session: Session, *, id: str | None = "dsh-fs") -> None:
        self.session = session
        """The observation owner every call runs in."""
        self._id = id

    @property
    def id(self) -> str | None:
        """The toolset's id."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """One tool per workspace tool offered to models, with our schema and description."""
        return {
            schema["name"]: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=schema["name"],
                    description=schema["description"],
                    parameters_json_schema=schema["parameters"],
                ),
                max_retries=1,
                args_validator=_ANY_OBJECT,
            )
            for schema in self.session.workspace.tool_schemas()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str | list[str | BinaryContent]:
        """Run the tool in the session; its rendered text (an image read: the text and the
        image as `BinaryContent`), or `ToolFailed` with our message.

        Raises:
            ToolFailed: the call failed (``Error: …`` with the code's remedy).
        """
        result = await self.session.call(name, tool_args, call_id=ctx.tool_call_id or None)
        if result.is_error:
            raise ToolFailed(result.text)
        image = image_of(result)
        if image is not None:
            return [result.text, BinaryContent(data=image.data, media_type=image.mime_type)]
        return result.text
