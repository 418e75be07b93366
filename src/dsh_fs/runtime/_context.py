"""The context: services by key, events, tools, prompt sections, disposable plugins, and the
one place a tool call is executed; the tool seam (`Tool`, whose `run` takes the context) and
the registry of a context's tools, here beside it (apart, each would import the other)."""

from __future__ import annotations

import logging
import math
import re
from abc import ABC, abstractmethod
from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from dsh_fs.errors import FsError, ToolErrorCode

from ._events import Dispose, EventBus, Signal, Waterfall, WaterfallListener
from ._prompts import PromptRegistry, PromptSection
from ._result import ToolResult
from ._session import ToolExecution
from ._tool import ToolAnnotations, ToolArgumentError, ToolError

__all__ = [
    "Context",
    "Plugin",
    "PluginHandle",
    "PluginScope",
    "ServiceKey",
    "Tool",
    "ToolRegistry",
]

logger = logging.getLogger("dsh_fs.tools")

T = TypeVar("T")
P = TypeVar("P")
R = TypeVar("R")
C = TypeVar("C")
A = TypeVar("A")
V = TypeVar("V")


class Tool(ABC, Generic[A, V]):
    """A model-facing tool: schema, argument parsing, execution and rendering.

    Type parameters: `A` is the parsed arguments, `V` the canonical value of a success.
    """

    name: str
    """Unique in a registry; matches ``[A-Za-z0-9_-]{1,64}``."""
    description: str
    """What the model reads about the tool."""
    annotations: ClassVar[ToolAnnotations] = ToolAnnotations()
    """What a host may assume about the tool's effects (the default assumes the worst)."""
    internal: ClassVar[bool] = False
    """An internal tool runs like any other (same events, same policy) but is not offered
    to models: `ToolRegistry.schemas` leaves it out. Adapters call internal tools to carry
    out a vendor dialect's operations (an insert, a patch, a delete)."""

    @abstractmethod
    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object schema)."""

    @abstractmethod
    def parse_arguments(self, raw: Mapping[str, Any]) -> A:
        """Validate the model's arguments.

        Raises:
            ToolArgumentError: with the exact model-facing message.
        """

    @abstractmethod
    async def run(self, context: Context, execution: ToolExecution, args: A) -> V:
        """Do the work and return the canonical value.

        Raises:
            FsError: a filesystem failure (the result carries its code).
            ToolError: any other expected failure.
        """

    @abstractmethod
    def render(self, value: V) -> str:
        """The text the model sees for `value`; a pure function of it."""

    @abstractmethod
    def to_json(self, value: V) -> dict[str, Any]:
        """The canonical value as plain JSON data (what `ToolResult.value` returns)."""

    def error_message(self, error: FsError) -> str:
        """The model-facing message for `error` (override to append a remedy)."""
        return error.message


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolRegistry:
    """The tools of one context, by name, in registration order."""

    __slots__ = ("_tools",)

    def __init__(self) -> None:
        self._tools: dict[str, Tool[Any, Any]] = {}

    def register(self, tool: Tool[Any, Any]) -> Dispose:
        """Add `tool`; returns its disposer.

        Raises:
            ValueError: the name is invalid or taken, the description is missing, or the
                schema is not an object schema; the message names the tool.
        """
        name = getattr(tool, "name", None)
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise ValueError(f"tool {tool!r} has an invalid name {name!r}")
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        if not isinstance(getattr(tool, "description", None), str):
            raise ValueError(f"tool {name!r} has no description")
        schema = tool.parameters_schema()
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(f"tool {name!r} must declare an object schema for its parameters")
        self._tools[name] = tool

        def dispose() -> None:
            if self._tools.get(name) is tool:
                del self._tools[name]

        return dispose

    def get(self, name: str) -> Tool[Any, Any] | None:
        """The tool named `name`, if registered."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names, in registration order (internal tools included)."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for every tool offered to models, in
        order (internal tools are left out)."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters_schema()}
            for t in self._tools.values()
            if not t.internal
        ]


@dataclass(frozen=True, slots=True)
class ServiceKey(Generic[T]):
    """Names a service of type `T` (e.g. ``ServiceKey[FileSystem]("fs")``)."""

    name: str
    """The service's name."""


class Context:
    """One workspace's runtime: services, events, tools and prompt sections.

    There is no global context: every workspace (and every test) builds its own.
    """

    __slots__ = ("_plugins", "_services", "events", "prompts", "tools")

    def __init__(self) -> None:
        self.events = EventBus()
        """Listeners and dispatch (`on`, `emit`, `waterfall`)."""
        self.tools = ToolRegistry()
        """The tools and their schemas (run them with `execute`)."""
        self.prompts = PromptRegistry()
        """Guidance sections assembled into a system prompt."""
        self._services: MutableMapping[str, object] = {}
        self._plugins: dict[str, PluginHandle] = {}

    def overlay(self, services: Mapping[ServiceKey[Any], object]) -> Context:
        """A view of this context in which `services` replace the ones under their keys.

        Everything else is this context's own (events, tools, prompts, plugins, the other
        services, also those provided later): a call executed through the view runs the same
        tools and listeners, and a tool that asks for an overlaid key gets the view's service
        (a session with its own fence: `dsh_fs.workspace.Session.set_roots`). Providing or
        applying a plugin through the view changes this context.
        """
        view = Context.__new__(Context)
        view.events = self.events
        view.tools = self.tools
        view.prompts = self.prompts
        view._plugins = self._plugins
        replaced: dict[str, object] = {key.name: service for key, service in services.items()}
        base = self._services
        maps = base.maps if isinstance(base, ChainMap) else [base]
        view._services = ChainMap(replaced, *maps)  # a view of a view keeps both overlays
        return view

    def provide(self, key: ServiceKey[T], service: T) -> Dispose:
        """Install `service` under `key`; returns its disposer.

        Raises:
            ValueError: a service is already installed under that key.
        """
        services = self._services
        if isinstance(services, ChainMap):
            services = services.maps[-1]  # a view provides into the context it overlays
        if key.name in services:
            raise ValueError(f"service {key.name!r} is already provided")
        services[key.name] = service

        def dispose() -> None:
            if services.get(key.name) is service:
                del services[key.name]

        return dispose

    def get(self, key: ServiceKey[T]) -> T:
        """The service installed under `key`.

        Raises:
            LookupError: no service is installed under that key.
        """
        try:
            return self._services[key.name]  # type: ignore[return-value]
        except KeyError:
            raise LookupError(f"no service {key.name!r} is provided in this context") from None

    def has(self, key: ServiceKey[Any]) -> bool:
        """Whether a service is installed under `key`."""
        return key.name in self._services

    def use(self, plugin: Plugin[C], config: C) -> PluginHandle:
        """Apply `plugin` with `config`; dispose the returned handle to remove it entirely.

        Raises:
            ValueError: a plugin with the same name is already applied.
        """
        if plugin.name in self._plugins:
            raise ValueError(f"plugin {plugin.name!r} is already applied to this context")
        scope = PluginScope(self)
        handle = PluginHandle(plugin.name, scope, self)
        try:
            plugin.apply(scope, config)
        except BaseException:
            scope.dispose()
            raise
        self._plugins[plugin.name] = handle
        return handle

    def plugin_names(self) -> list[str]:
        """Names of the applied plugins, in application order."""
        return list(self._plugins)

    async def execute(
        self,
        name: str,
        arguments: object,
        execution: ToolExecution | None = None,
        *,
        internal: bool = False,
    ) -> ToolResult:
        """Validate `arguments`, run tool `name` and return its result; never raises for a
        failure.

        An internal tool (`Tool.internal`) is an unknown tool unless `internal` is true: a
        model calling a name it was never offered reaches nothing; adapters that carry out
        a vendor dialect's operations pass ``internal=True``.

        `arguments` is whatever the model sent (normally a JSON object): anything else, an
        unknown tool, an `FsError`, a `ToolError` or an unexpected bug comes back as an error
        result with a code, so a model never sees a traceback. Only cancellation (and other
        `BaseException`s) propagate: a cancelled call has no result, and what a provider
        guarantees about a cancelled mutation is in `dsh_fs.fs.FileSystem`.
        """
        if not _lossless_json(arguments):
            return ToolResult.failure(
                name,
                code=ToolErrorCode.INVALID_ARGS.value,
                message="tool execution arguments must be losslessly JSON-serializable",
                error_name="ToolArgumentError",
            )
        tool = self.tools.get(name)
        if tool is None or (tool.internal and not internal):
            return ToolResult.failure(
                name,
                code=ToolErrorCode.UNKNOWN_TOOL.value,
                message=f'unknown tool "{name}"',
                error_name="ToolError",
            )
        if execution is None:
            execution = ToolExecution(tool=name)
        try:
            if not isinstance(arguments, Mapping):
                raise ToolArgumentError('invalid arguments: "arguments" must be an object')
            args = tool.parse_arguments(arguments)
            data = await tool.run(self, execution, args)
            text = tool.render(data)
        except FsError as error:
            return ToolResult.failure(
                name,
                code=error.code.value,
                message=tool.error_message(error),
                error_name="FsError",
                details=error.details,
            )
        except ToolError as error:
            return ToolResult.failure(
                name, code=error.code, message=error.message, error_name=type(error).__name__
            )
        except Exception as error:
            logger.exception("tool %r failed unexpectedly", name)
            return ToolResult.failure(
                name,
                code=ToolErrorCode.INTERNAL_ERROR.value,
                message=f"internal error in the {name} tool ({type(error).__name__})",
                error_name="ToolError",
            )
        return ToolResult(tool=name, is_error=False, text=text, data=data, to_json=tool.to_json)

    def _forget(self, handle: PluginHandle) -> None:
        if self._plugins.get(handle.name) is handle:
            del self._plugins[handle.name]


def _lossless_json(value: object) -> bool:
    """Whether `value` is plain JSON data that survives a round trip exactly: no NaN or
    infinity, no negative zero, string keys only. Upstream refuses anything else before it
    even looks the tool up; iterative, so any nesting depth is fine."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float):
            if (
                item != item
                or item in (math.inf, -math.inf)
                or (item == 0 and math.copysign(1, item) < 0)
            ):
                return False
        elif isinstance(item, dict):
            for key in item:  # a loop: cheaper than `all` over a generator for a few keys
                if not isinstance(key, str):
                    return False
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif item is not None and not isinstance(item, (str, int, bool)):
            return False
    return True


class Plugin(ABC, Generic[C]):
    """Something that adds listeners, tools, services or prompt sections to a context.

    All state a plugin keeps must be created in `apply` and reachable only through what it
    registers on the scope, so disposal drops it and a re-applied plugin starts clean.
    """

    name: str
    """Unique within a context."""

    @abstractmethod
    def apply(self, scope: PluginScope, config: C) -> None:
        """Register everything through `scope`."""


class PluginScope:
    """What a plugin registers through; remembers each registration to undo it."""

    __slots__ = ("_disposers", "context")

    def __init__(self, context: Context) -> None:
        self.context = context
        """The context the plugin is applied to (read it; register through the scope)."""
        self._disposers: list[Dispose] = []

    def on_signal(
        self, event: Signal[P], listener: Callable[[P], None], *, prepend: bool = False
    ) -> None:
        """Listen to a signal for the plugin's lifetime."""
        self._disposers.append(self.context.events.on(event, listener, prepend=prepend))

    def on_waterfall(
        self, event: Waterfall[P, R], listener: WaterfallListener[P, R], *, prepend: bool = False
    ) -> None:
        """Listen to a waterfall for the plugin's lifetime."""
        self._disposers.append(self.context.events.on(event, listener, prepend=prepend))

    def register_tool(self, tool: Tool[Any, Any]) -> None:
        """Register a tool for the plugin's lifetime."""
        self._disposers.append(self.context.tools.register(tool))

    def add_prompt_section(self, section: PromptSection) -> None:
        """Add a guidance section for the plugin's lifetime."""
        self._disposers.append(self.context.prompts.add(section))

    def provide(self, key: ServiceKey[T], service: T) -> None:
        """Install a service for the plugin's lifetime."""
        self._disposers.append(self.context.provide(key, service))

    def add_disposer(self, dispose: Dispose) -> None:
        """Run `dispose` when the plugin is disposed (after later registrations are undone)."""
        self._disposers.append(dispose)

    def dispose(self) -> None:
        """Undo every registration, newest first."""
        while self._disposers:
            self._disposers.pop()()


class PluginHandle:
    """An applied plugin; `dispose()` removes its listeners, tools, services and state."""

    __slots__ = ("_context", "_scope", "name")

    def __init__(self, name: str, scope: PluginScope, context: Context) -> None:
        self.name = name
        self._scope = scope
        self._context = context

    def dispose(self) -> None:
        """Remove the plugin; harmless to call twice."""
        self._scope.dispose()
        self._context._forget(self)
