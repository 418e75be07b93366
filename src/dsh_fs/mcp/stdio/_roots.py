"""MCP roots (SPEC §10): the client's ``file:`` roots as the sandbox's fence.

A client that declares the ``roots`` capability is asked for its roots (``roots/list``) once
it is initialized, and again on ``notifications/roots/list_changed``. With no ROOT on the
command line its roots are the fence (the first is the base of relative paths); with ROOTs
they can only narrow them. Until it answers (at most `ANSWER_SECONDS`), or when it names
none, every path is refused saying the client named no roots. Roots that are not ``file:``
URIs of existing directories are ignored and logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from dsh_fs.workspace import Workspace

__all__ = ["ANSWER_SECONDS", "RootsMode", "apply_roots", "roots_of"]

logger = logging.getLogger("dsh_fs.mcp")

RootsMode: TypeAlias = Literal["off", "replace", "narrow"]
"""Whether the client's roots are ignored, are the fence, or narrow the given roots."""


def _answer_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("DSH_FS_MCP_ROOTS_WAIT", "5")))
    except ValueError:
        return 5.0


ANSWER_SECONDS = _answer_seconds()
"""How long a tool call waits for the client's first answer to ``roots/list`` (5 s;
``DSH_FS_MCP_ROOTS_WAIT`` changes it, e.g. on a loaded machine)."""


def roots_of(result: object) -> list[str]:
    """The existing directories named by a ``roots/list`` result's ``file:`` URIs."""
    roots = result.get("roots") if isinstance(result, dict) else None
    if not isinstance(roots, list):
        logger.warning("the client's roots/list answer has no roots list: ignored")
        return []
    found: list[str] = []
    for root in roots:
        uri = root.get("uri") if isinstance(root, dict) else None
        if not isinstance(uri, str):
            logger.warning("ignored a root without a uri: %r", root)
            continue
        parts = urlsplit(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            logger.warning("ignored root %s: not a local file: URI", uri)
            continue
        path = unquote(parts.path)
        if not path or "\0" in path or not os.path.isdir(path):
            logger.warning("ignored root %s: not an existing directory", uri)
            continue
        found.append(path)
    return found


def apply_roots(
    workspace: Workspace, roots: Sequence[str] | None, mode: RootsMode
) -> tuple[str, ...]:
    """Fence `workspace`'s sandbox in to `roots` (see `SandboxFileSystem.set_client_roots`);
    returns the roots now in force (the given ones when the provider is not a sandbox)."""
    from dsh_fs.providers import SandboxFileSystem

    fs = workspace.fs
    if mode == "off" or not isinstance(fs, SandboxFileSystem):
        return ()
    kept = fs.set_client_roots(roots, replace=mode == "replace")
    logger.info("the client's roots: fence now %s", ", ".join(kept) or "(none)")
    return kept
