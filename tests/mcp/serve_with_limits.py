"""Serve a folder over HTTP with given `HttpLimits` (tests shrink the timeouts and caps).

Usage: ``python serve_with_limits.py HOST:PORT ROOT LIMITS_JSON``; the token comes from
``DSH_FS_MCP_TOKEN``. Logs at info level and announces ``serving MCP … at URL`` on stderr as
the CLI does.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import anyio

from dsh_fs.mcp import HttpLimits, bind_socket, serve_http
from dsh_fs.workspace import Workspace


def main() -> None:
    address, root, limits = sys.argv[1:]
    host, port = address.rsplit(":", 1)
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="dsh-fs %(levelname)s %(name)s: %(message)s"
    )
    sock = bind_socket(host, int(port))
    bound, bound_port = sock.getsockname()[:2]
    url = f"http://{bound}:{bound_port}/mcp"

    def ready() -> None:
        print(f"dsh-fs: serving MCP (test limits) at {url}", file=sys.stderr, flush=True)

    async def serve() -> None:
        async with Workspace.sandbox(root) as workspace:
            await serve_http(
                workspace,
                sock,
                token=os.environ["DSH_FS_MCP_TOKEN"],
                limits=HttpLimits(**json.loads(limits)),
                log_level="info",
                on_ready=ready,
            )

    with sock:
        anyio.run(serve)


if __name__ == "__main__":
    main()
