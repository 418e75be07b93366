"""LangChain and LangGraph: the workspace's tools as LangChain tools, with our schemas.

`langchain_tools` gives one `StructuredTool` per workspace tool offered to models, its
``args_schema`` our JSON Schema and its description ours, so a chat model bound to them
(``model.bind_tools``, ``create_agent``, LangGraph's ``ToolNode``) sees what every other
adapter shows. Arguments are checked by our tools, with our messages. A failed call raises
`ToolException` with our text, which LangChain turns into a ``ToolMessage`` with
``status="error"`` (``handle_tool_error=True``): the model reads the refusal (stale, not
read first, an edit miss with its diagnosis) and adapts. An image read answers with a text
block and an ``image`` content block.

All the tools share one session, the observation owner: build them per conversation. With
an async `Session` the tools run only through the async API (``ainvoke``, ``astream``); with
a `SyncSession` both work. Needs ``pip install 'dsh-fs[langchain]'``.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from ._images import image_of
from ._runner import SessionRunner

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Session

    from ._sync import SyncSession

__all__ = ["langchain_tools"]


def langchain_tools(session: Session | SyncSession) -> list[BaseTool]:
    """The workspace's tools as LangChain tools, all owned by `session`.

    Args:
        session: The observation owner (one per conversation): a `Session` for async
            agents, a `SyncSession` for agents driven synchronously (or both ways).
    """
    runner = SessionRunner(session)
    return [
        StructuredTool(
            name=schema["name"],
            description=schema["description"],
            args_schema=schema["parameters"],
            func=_blocking(runner, schema["name"]),
            coroutine=_awaiting(runner, schema["name"]),
            handle_tool_error=True,
        )
        for schema in runner.session.workspace.tool_schemas()
    ]


def _content(result: ToolResult) -> str | list[str | dict[str, Any]]:
    """A successful result as tool-message content; `ToolException` with our text on a
    failure."""
    if result.is_error:
        raise ToolException(result.text)
    image = image_of(result)
    if image is None:
        return result.text
    data = base64.b64encode(image.data).decode("ascii")
    return [
        {"type": "text", "text": result.text},
        {"type": "image", "base64": data, "mime_type": image.mime_type},
    ]


def _blocking(runner: SessionRunner, name: str) -> Callable[..., Any]:
    def run(**arguments: Any) -> str | list[str | dict[str, Any]]:
        return _content(runner.call_blocking(name, arguments, f"the {name} tool"))

    return run


def _awaiting(runner: SessionRunner, name: str) -> Callable[..., Awaitable[Any]]:
    async def run(**arguments: Any) -> str | list[str | dict[str, Any]]:
        return _content(await runner.call(name, arguments))

    return run
