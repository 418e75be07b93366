"""The runtime's context: services, plugins, tool registration errors, and `execute` (every
failure a result with a code, never an exception; cancellation propagates)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.runtime import (
    Context,
    Plugin,
    PluginScope,
    PromptSection,
    ServiceKey,
    Tool,
    ToolArgumentError,
    ToolError,
    ToolExecution,
)

pytestmark = pytest.mark.anyio

NUMBER: ServiceKey[int] = ServiceKey("number")
INTERNAL = "internal error in the echo tool"
LOSSY = "Error: tool execution arguments must be losslessly JSON-serializable"


class Echo(Tool[Mapping[str, Any], str]):
    """Returns its `say` argument; `behaviour` makes it fail in each way a tool can."""

    description = "Echo."

    def __init__(self, name: str = "echo", behaviour: str = "ok") -> None:
        self.name = name
        self.behaviour = behaviour
        self.cancelled = anyio.Event()

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"say": {"type": "string"}}}

    def parse_arguments(self, raw: Mapping[str, Any]) -> Mapping[str, Any]:
        if not isinstance(raw.get("say"), str):
            raise ToolArgumentError('invalid arguments: "say" must be a string')
        return raw

    async def run(self, context: Context, execution: ToolExecution, args: Mapping[str, Any]) -> str:
        if self.behaviour == "bug":
            raise KeyError("oops")
        if self.behaviour == "fs":
            raise FsError(
                FsErrorCode.EDIT_NOT_FOUND, "not there\nhint", path="/p", details={"line": 3}
            )
        if self.behaviour == "tool":
            raise ToolError("ECHO_REFUSED", "echo refuses")
        if self.behaviour == "hang":
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
        return str(args["say"])

    def render(self, value: str) -> str:
        return f"said {value}"

    def to_json(self, value: str) -> dict[str, Any]:
        return {"said": value}


class Registers(Plugin[Tool[Any, Any]]):
    """Provides a service, then adds a prompt section, then registers the tool it is given."""

    name = "registers"

    def apply(self, scope: PluginScope, config: Tool[Any, Any]) -> None:
        scope.provide(NUMBER, 7)
        scope.add_prompt_section(PromptSection(id=f"tools:{config.name}", text="Use it."))
        scope.register_tool(config)


async def test_a_success_has_the_text_and_a_lazy_json_value() -> None:
    context = Context()
    context.use(Registers(), Echo())
    result = await context.execute("echo", {"say": "hi"})
    assert (result.is_error, result.text, result.code, result.error) == (
        False,
        "said hi",
        None,
        None,
    )
    assert result.value == {"said": "hi"}
    assert result.data == "hi"


@pytest.mark.parametrize(
    ("behaviour", "code", "name", "text"),
    [
        (
            "bug",
            "TOOL_INTERNAL_ERROR",
            "ToolError",
            "Error: internal error in the echo tool (KeyError)",
        ),
        ("fs", "FS_EDIT_NOT_FOUND", "FsError", "Error: not there\nhint"),
        ("tool", "ECHO_REFUSED", "ToolError", "Error: echo refuses"),
    ],
)
async def test_every_failure_is_a_result_with_a_code(
    behaviour: str, code: str, name: str, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    context = Context()
    context.use(Registers(), Echo(behaviour=behaviour))
    with caplog.at_level(logging.ERROR, logger="dsh_fs.tools"):
        result = await context.execute("echo", {"say": "hi"})
    assert (result.is_error, result.code, result.text, result.value) == (True, code, text, None)
    assert result.error is not None
    assert (result.error["name"], result.error["code"]) == (name, code)
    # A bug is logged with its traceback for the developer; expected failures are not.
    assert any(r.exc_info for r in caplog.records) is (behaviour == "bug")


async def test_an_fs_error_carries_its_details_to_the_result() -> None:
    context = Context()
    context.use(Registers(), Echo(behaviour="fs"))
    result = await context.execute("echo", {"say": "hi"})
    assert result.details == {"line": 3}
    assert result.error == {"name": "FsError", "code": "FS_EDIT_NOT_FOUND", "details": {"line": 3}}


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        (["say"], 'Error: invalid arguments: "arguments" must be an object'),
        ({"say": 1}, 'Error: invalid arguments: "say" must be a string'),
        (
            {"say": float("nan")},
            "Error: tool execution arguments must be losslessly JSON-serializable",
        ),
        (
            {"x": [{"y": -0.0}]},
            "Error: tool execution arguments must be losslessly JSON-serializable",
        ),
        ({1: "a"}, "Error: tool execution arguments must be losslessly JSON-serializable"),
    ],
)
async def test_bad_arguments_are_invalid_args(arguments: object, text: str) -> None:
    context = Context()
    context.use(Registers(), Echo())
    result = await context.execute("echo", arguments)
    assert (result.code, result.text) == ("INVALID_ARGS", text)


async def test_deeply_nested_arguments_are_checked_without_recursion() -> None:
    context = Context()
    context.use(Registers(), Echo())
    nested: object = "x"
    for _ in range(100_000):
        nested = [nested]
    result = await context.execute("echo", {"say": "hi", "extra": nested})
    assert result.text == "said hi"


async def test_an_unknown_tool_is_a_result_in_upstreams_words() -> None:
    result = await Context().execute("nope", {})
    assert (result.code, result.text) == ("UNKNOWN_TOOL", 'Error: unknown tool "nope"')


async def test_cancellation_propagates_and_is_never_a_result() -> None:
    context = Context()
    tool = Echo(behaviour="hang")
    context.use(Registers(), tool)
    with anyio.move_on_after(0.05) as scope:
        await context.execute("echo", {"say": "hi"})
        pytest.fail("a cancelled call returned")  # pragma: no cover
    assert scope.cancelled_caught
    assert tool.cancelled.is_set()


def test_registering_a_second_tool_of_the_same_name_fails_naming_it() -> None:
    context = Context()
    context.tools.register(Echo())
    with pytest.raises(ValueError, match="a tool named 'echo' is already registered"):
        context.tools.register(Echo())


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (Echo(name="has space"), "has an invalid name 'has space'"),
        (Echo(name="x" * 65), "has an invalid name"),
    ],
)
def test_a_tool_with_an_invalid_name_fails_at_registration(tool: Echo, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Context().tools.register(tool)


def test_a_tool_without_an_object_schema_or_a_description_fails_at_registration() -> None:
    class NoSchema(Echo):
        def parameters_schema(self) -> dict[str, Any]:
            return {"type": "string"}

    class NoDescription(Echo):
        description = None  # type: ignore[assignment]

    with pytest.raises(ValueError, match="tool 'echo' must declare an object schema"):
        Context().tools.register(NoSchema())
    with pytest.raises(ValueError, match="tool 'echo' has no description"):
        Context().tools.register(NoDescription())


def test_a_plugin_applied_twice_and_a_service_provided_twice_fail_naming_them() -> None:
    context = Context()
    context.use(Registers(), Echo())
    with pytest.raises(ValueError, match="plugin 'registers' is already applied"):
        context.use(Registers(), Echo(name="other"))
    with pytest.raises(ValueError, match="service 'number' is already provided"):
        context.provide(NUMBER, 8)
    assert context.tools.names() == ["echo"]
    assert context.get(NUMBER) == 7


def test_a_plugin_that_fails_while_applying_leaves_nothing_behind() -> None:
    context = Context()
    context.tools.register(Echo())
    # Its service and prompt are registered before its tool clashes with "echo".
    with pytest.raises(ValueError, match="already registered"):
        context.use(Registers(), Echo())
    assert not context.has(NUMBER)
    assert context.prompts.sections() == []
    assert context.plugin_names() == []


def test_disposing_a_plugin_removes_everything_it_registered() -> None:
    context = Context()
    handle = context.use(Registers(), Echo())
    assert context.get(NUMBER) == 7
    handle.dispose()
    handle.dispose()
    assert context.tools.names() == []
    assert context.prompts.sections() == []
    assert not context.has(NUMBER)
    with pytest.raises(LookupError, match="no service 'number'"):
        context.get(NUMBER)


def test_an_overlay_replaces_only_its_services_and_shares_everything_else() -> None:
    context = Context()
    other: ServiceKey[str] = ServiceKey("other")
    context.provide(NUMBER, 1)
    view = context.overlay({NUMBER: 2})
    context.provide(other, "later")  # provided after the view was made: seen through it
    assert view.get(NUMBER) == 2
    assert context.get(NUMBER) == 1
    assert view.get(other) == "later"
    assert view.tools is context.tools
    assert view.events is context.events
    nested = view.overlay({other: "nested"})
    assert (nested.get(NUMBER), nested.get(other)) == (2, "nested")
    with pytest.raises(ValueError, match="already provided"):
        view.provide(other, "again")
