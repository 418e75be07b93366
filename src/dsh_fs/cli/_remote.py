"""Remote ROOTs on the command line (SPEC §14): ``dsh-fs mcp|log|diff|undo s3://bucket/x``.

A ROOT spelled as a URL is storage fsspec opens (any installed backend: ``s3://``,
``memory://``, ``gcs://``, …), served through `Workspace.remote` with the change journal on
the same storage, so every machine that names the URL sees one journal. Credentials and
endpoints come from the backend's own configuration: for S3 the standard AWS environment
(``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, the credentials chain), which botocore reads itself.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from ._usage import UsageError

if TYPE_CHECKING:
    from dsh_fs.workspace import Workspace

__all__ = ["is_url", "open_remote", "remote_root"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

_LOCAL_ONLY = (
    ("--read-only", "read_only"),
    ("--full-access", "full_access"),
    ("--read-anywhere", "read_anywhere"),
    ("--editorconfig", "editorconfig"),
)
"""`dsh-fs mcp` flags about a local sandbox's fence, which a remote ROOT does not have."""


def is_url(root: str) -> bool:
    """Whether the operand `root` is a URL (``s3://bucket/x``), not a local path."""
    return _URL.match(root) is not None


def remote_root(args: argparse.Namespace) -> str | None:
    """The ROOT URL `dsh-fs mcp` serves, or None for local folders.

    Raises:
        UsageError: a URL beside other ROOTs, or with a flag only a local fence has.
    """
    urls: list[str] = [root for root in args.roots if is_url(root)]
    if not urls:
        return None
    url = urls[0]
    if len(args.roots) > 1:
        # One root is one storage, one journal and one display prefix (the library serves
        # one remote root per Workspace too).
        raise UsageError(f"dsh-fs mcp: {url}: a remote ROOT is served alone; name only one ROOT")
    for flag, name in _LOCAL_ONLY:
        if getattr(args, name):
            raise UsageError(f"dsh-fs mcp: {flag} applies to local folders, not to {url}")
    if args.client_roots is not None:
        # A client's roots are file:// folders on the client's machine, never the bucket.
        raise UsageError(f"dsh-fs mcp: --client-roots applies to local folders, not to {url}")
    return url


def open_remote(command: str, url: str, **options: Any) -> Workspace:
    """`Workspace.remote(url, **options)`, its failures as one usage line of `command`.

    Raises:
        UsageError: an unknown protocol, a backend package not installed, a journal store
            that is not on the same storage or cannot be opened (the storage unreachable,
            no such bucket, credentials refused).
    """
    from dsh_fs.workspace import Workspace

    try:
        return Workspace.remote(url, **options)
    except ImportError as exc:
        # fsspec names the missing package (s3fs, gcsfs, …); the extras say how to get it.
        raise UsageError(
            f"dsh-fs {command}: {url}: {exc} (for S3: pip install 'dsh-fs[s3]')"
        ) from exc
    except ValueError as exc:
        raise UsageError(f"dsh-fs {command}: {url}: {exc}") from exc
