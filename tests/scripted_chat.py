"""A LangChain chat model that plays a script of tool calls (the only thing mocked).

Each turn the agent loop calls the model; it records the messages it was given (so a test
can check what reached it: our refusal, our diagnosis) and answers with the script's next
step, an `AIMessage` with tool calls or a final text. It binds any tools (recording their
definitions as a provider would receive them). Import it only after the importorskip of
``langchain_core``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

Step = Callable[[list[BaseMessage]], AIMessage]
"""One turn: the model's answer to the conversation so far."""


def call(name: str, args: dict[str, Any], call_id: str) -> Step:
    """A turn that calls one tool."""
    tool_call = ToolCall(name=name, args=args, id=call_id, type="tool_call")
    return lambda _messages: AIMessage(content="", tool_calls=[tool_call])


def say(text: str) -> Step:
    """A final turn: text, no tool calls (the loop ends)."""
    return lambda _messages: AIMessage(content=text)


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The tool results in a conversation, in order."""
    return [message for message in messages if isinstance(message, ToolMessage)]


class ScriptedChatModel(BaseChatModel):
    """Answers turn n with ``script[n]``; a turn past the end is an error."""

    script: list[Step]
    seen: list[list[BaseMessage]] = []  # noqa: RUF012 - pydantic copies the default
    bound: list[dict[str, Any]] = []  # noqa: RUF012 - pydantic copies the default

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        self.bound.extend(convert_to_openai_tool(tool) for tool in tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = len(self.seen)
        self.seen.append(list(messages))
        assert turn < len(self.script), f"the model was called a {turn + 1}th time"
        return ChatResult(generations=[ChatGeneration(message=self.script[turn](messages))])
