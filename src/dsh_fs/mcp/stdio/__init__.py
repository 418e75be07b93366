"""The stdio MCP server: `serve_stdio`, what `dsh-fs mcp` runs.

The handshake-era server (`_handshake`) answers every host that opens with ``initialize``
without importing the SDK; a client that opens in the 2026-07-28 era is handed, with what
was read so far, to the SDK's server on the same lines (`_sdk`, imported then). Both read
and write newline-delimited JSON-RPC through the stdio transport (`_lines`: bounded lines,
an oversized one refused without being read whole), parsed by `dsh_fs.mcp._wire`.
"""

from ._handshake import serve_stdio

__all__ = ["serve_stdio"]
