"""``dsh-fs mcp --client-roots``: what a client's MCP roots do to the ROOTs given (SPEC
§10.1), for the stdio and the HTTP server alike."""

from __future__ import annotations

import argparse
from typing import Literal

from ._remote import is_url

__all__ = ["client_roots_mode"]


def client_roots_mode(
    args: argparse.Namespace,
) -> Literal["off", "replace", "narrow", "strict"]:
    """What a client's MCP roots do (SPEC §10.1): they are the fence when no ROOT was given,
    else the ROOTs are authoritative (roots that overlap narrow them) unless
    ``--client-roots`` says ``strict`` or ``off``; a remote ROOT ignores them."""
    if args.client_roots == "off" or any(is_url(root) for root in args.roots):
        # A remote ROOT: a client's roots are folders on its machine, never the storage.
        return "off"
    if not args.roots:
        return "replace"
    return "strict" if args.client_roots == "strict" else "narrow"
