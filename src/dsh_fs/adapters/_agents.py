"""The OpenAI Agents SDK (`openai-agents`): the workspace's tools as its tools.

`agents_tools` gives an agent our tools as `FunctionTool`s with our schemas, and
``apply_patch`` as the SDK's `ApplyPatchTool` backed by `WorkspaceEditor`, an
`ApplyPatchEditor` that runs each operation through the workspace (`run_apply_patch`): the
observation policy, the provider's critical sections and the fence apply unchanged. All the
tools of one call share one `Session`, the observation owner: build them per conversation
(``agent.clone(tools=agents_tools(workspace.session()))``) so one run's reads authorize that
run's patches and no other's. Needs ``pip install 'dsh-fs[agents]'``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agents import ApplyPatchTool, FunctionTool, Tool, ToolOutputImage, ToolOutputText
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.tool_context import ToolContext

from ._images import image_of, image_url
from ._openai_responses import run_apply_patch

if TYPE_CHECKING:
    from dsh_fs.workspace import Session

__all__ = ["WorkspaceEditor", "agents_tools"]

_PATCH_REPLACES = frozenset({"write", "edit"})


class WorkspaceEditor:
    """An Agents SDK `ApplyPatchEditor` that applies each operation in one `Session`.

    A failed operation (stale, not read first, a context miss, outside the fence, a
    malformed diff) is a ``failed`` result with our message; nothing changed on disk.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        """The observation owner every operation runs in."""

    async def _apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        raw: dict[str, Any] = {"type": operation.type, "path": operation.path}
        if operation.diff is not None:
            raw["diff"] = operation.diff
        outcome = await run_apply_patch(self.session, raw)
        return ApplyPatchResult(status=outcome["status"], output=outcome["output"])

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """A guarded write: never over a file this session did not read."""
        return await self._apply(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """A strict V4A patch of a file read at its current version, all or nothing."""
        return await self._apply(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """A guarded delete of a file read at its current version."""
        return await self._apply(operation)


def agents_tools(session: Session, *, apply_patch: bool = True) -> list[Tool]:
    """The workspace's tools for an Agents SDK `Agent`, all owned by `session`.

    Args:
        session: The observation owner (one per conversation or run).
        apply_patch: Offer the SDK's `ApplyPatchTool` instead of write and edit (read and
            the other tools stay function tools), when the workspace grants at least one
            of its operations (`Workspace.dialects`); each operation runs only if granted.
    """
    apply_patch = apply_patch and session.workspace.dialects.any_change()
    tools: list[Tool] = [
        FunctionTool(
            name=schema["name"],
            description=schema["description"],
            params_json_schema=schema["parameters"],
            on_invoke_tool=_invoker(session, schema["name"]),
            # Our schemas have optional parameters, which strict mode does not allow.
            strict_json_schema=False,
        )
        for schema in session.workspace.tool_schemas()
        if not (apply_patch and schema["name"] in _PATCH_REPLACES)
    ]
    if apply_patch:
        tools.append(ApplyPatchTool(editor=WorkspaceEditor(session)))
    return tools


def _invoker(session: Session, name: str) -> Any:
    async def invoke(
        context: ToolContext[Any], arguments: str
    ) -> str | list[ToolOutputText | ToolOutputImage]:
        try:
            parsed: object = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            return f"Error: arguments are not valid JSON ({detail}); send a JSON object"
        result = await session.call(name, parsed, call_id=context.tool_call_id or None)
        image = image_of(result)
        if image is not None:  # an image read: its text, then the image (SPEC §10)
            return [ToolOutputText(text=result.text), ToolOutputImage(image_url=image_url(image))]
        return result.text

    return invoke
