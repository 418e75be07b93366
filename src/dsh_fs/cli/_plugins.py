"""``dsh-fs mcp --plugin MODULE:ATTR``: a plugin of your own (your tools) beside the built-in
ones, found as ``uvicorn`` finds an app: a module importable by this Python (installed, or
on ``PYTHONPATH``) and an attribute of it, a `Plugin` instance or a class built without
arguments. It is applied with the config None, after the built-in plugins."""

from __future__ import annotations

import importlib

from dsh_fs.runtime import Plugin

from ._usage import UsageError

__all__ = ["load_plugin"]


def load_plugin(spec: str) -> Plugin[None]:
    """The plugin `spec` (``MODULE:ATTR``) names.

    Raises:
        UsageError: `spec` is no ``MODULE:ATTR``, the module cannot be imported, it has no
            such attribute, or the attribute is no plugin.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"dsh-fs mcp: --plugin {spec}: expected MODULE:ATTR")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"dsh-fs mcp: --plugin {spec}: cannot import {module_name}: {exc}"
        ) from None
    found: object = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise UsageError(f"dsh-fs mcp: --plugin {spec}: {module_name} has no {attribute}")
        found = getattr(found, part)
    if isinstance(found, type) and issubclass(found, Plugin):
        found = found()
    if not isinstance(found, Plugin):
        raise UsageError(f"dsh-fs mcp: --plugin {spec}: {attribute} is not a dsh_fs Plugin")
    return found
