"""MCP roots (SPEC §10, §10.1): a client's ``file:`` roots as its session's fence.

A client that declares the ``roots`` capability is asked for its roots (``roots/list``), and
again after ``notifications/roots/list_changed``. With no ROOT on the command line its roots
are the fence (the first is the base of relative paths): until it answers (at most
`ANSWER_SECONDS`), or when it names none, every path is refused saying the client named no
roots. With ROOTs the operator's ROOTs are authoritative (SPEC §10.1): roots that overlap
them narrow them, while an empty list or roots of which none overlaps a ROOT (the MCP
Inspector sends ``[]``; Claude Code sends the folder it was started in) leave them in force,
logged with the client's roots; a refusal the client's roots cause names them. ``strict``
restores §10's intersection (no overlap: every path refused). Roots that are not ``file:``
URIs of existing directories are refused (logged; the others are kept). The fence is the
client's session's own (`Session.set_roots`): over HTTP each MCP session has its own, and a
removed root drops only what was observed under it. Both servers use this: the handshake-era
stdio server (`stdio._handshake`) and the SDK's (`_server`: HTTP, and the 2026-07-28 era on
stdio).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from dsh_fs.workspace import Session

__all__ = ["ANSWER_SECONDS", "RootsMode", "fence_session", "roots_of", "withhold"]

logger = logging.getLogger("dsh_fs.mcp")

RootsMode: TypeAlias = Literal["off", "replace", "narrow", "strict"]
"""What a client's roots do to the given roots: nothing (``off``); they are the fence
(``replace``: no ROOT was given); roots that overlap narrow them, others leave them in force
(``narrow``, SPEC §10.1); they are intersected with them, none left refusing every path
(``strict``, SPEC §10)."""


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
            logger.warning("refused a root without a uri: %r", root)
            continue
        parts = urlsplit(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            logger.warning("refused root %s: not a local file: URI", uri)
            continue
        path = unquote(parts.path)
        if not path or "\0" in path or not os.path.isdir(path):
            logger.warning("refused root %s: not an existing directory", uri)
            continue
        found.append(path)
    return found


def fence_session(session: Session, roots: Sequence[str], mode: RootsMode) -> tuple[str, ...]:
    """Fence `session` in to the `roots` a client answered (`Session.set_roots`, as `mode`
    says); returns the roots now in force (none when `mode` is ``off`` or the workspace is
    not a sandbox). Called once per answer, so the warning that the client's roots were
    left out comes once per change of them, not once per call."""
    if mode == "off":
        return ()
    kept = session.set_roots(roots, replace=mode == "replace", strict=mode != "narrow")
    if kept is None:
        return ()
    if mode == "narrow" and session.client_roots is None:
        # The user's setup is right (the served ROOTs work); the log says why the client's
        # own roots changed nothing, naming them.
        named = f"the client's roots ({', '.join(roots)}) overlap no served ROOT"
        logger.warning(
            "%s: %s keeps the served ROOTs %s",
            named if roots else "the client named no roots",
            session.id,
            ", ".join(kept),
        )
    else:
        logger.info(
            "the client's roots: %s's fence now %s", session.id, ", ".join(kept) or "(none)"
        )
    return kept


def withhold(session: Session, mode: RootsMode) -> None:
    """Before a client's first answer (or when it did not answer in time): where its roots
    are the fence or strictly narrow it, no path is inside yet; where the served ROOTs are
    authoritative (``narrow``), they stay in force."""
    if mode in ("replace", "strict") and session.roots is None:
        session.set_roots((), replace=mode == "replace")
