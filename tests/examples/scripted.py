"""A scripted model endpoint on loopback, and loading an example file as a module."""

from __future__ import annotations

import importlib.util
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

Reply = Callable[[int, dict[str, Any]], dict[str, Any]]
"""Builds the response body for the n-th request (from 0) and its JSON body."""


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def scripted_endpoint(path: str, reply: Reply) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve POST `path` on 127.0.0.1 with `reply`; yields the base URL and the requests."""
    requests: list[dict[str, Any]] = []

    async def handle(request: Request) -> JSONResponse:
        body = await request.json()
        requests.append(body)
        return JSONResponse(reply(len(requests) - 1, body))

    app = Starlette(routes=[Route(path, handle, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", requests
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive()
