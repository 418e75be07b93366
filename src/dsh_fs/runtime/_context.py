"""The context: services by key, events, tools, prompt sections, and disposable plugins."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._events import Dispose, EventBus, Signal, Waterfall, WaterfallListener
from ._prompts import PromptRegistry, PromptSection
from ._tools import Tool, ToolRegistry

__all__ = ["Context", "Plugin", "PluginHandle", "PluginScope", "ServiceKey"]

T = TypeVar("T")
P = TypeVar("P")
R = TypeVar("R")
C = TypeVar("C")


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
        self.tools = ToolRegistry(self)
        """The tools, their schemas, and `execute`."""
        self.prompts = PromptRegistry()
        """Guidance sections assembled into a system prompt."""
        self._services: dict[str, object] = {}
        self._plugins: dict[str, PluginHandle] = {}

    def provide(self, key: ServiceKey[T], service: T) -> Dispose:
        """Install `service` under `key`; returns its disposer.

        Raises:
            ValueError: a service is already installed under that key.
        """
        if key.name in self._services:
            raise ValueError(f"service {key.name!r} is already provided")
        self._services[key.name] = service

        def dispose() -> None:
            if self._services.get(key.name) is service:
                del self._services[key.name]

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

    def _forget(self, handle: PluginHandle) -> None:
        if self._plugins.get(handle.name) is handle:
            del self._plugins[handle.name]


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
