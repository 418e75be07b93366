"""The `put` fixture: every conformance test runs once per backend in `BACKENDS`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import _platform

from .backends import BACKENDS, Backend, ProviderUnderTest


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
async def put(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ProviderUnderTest]:
    backend: Backend = request.param
    forced = _platform.force(_platform.PORTABLE) if backend.portable else contextlib.nullcontext()
    with forced:
        async with backend.factory(tmp_path) as provider:
            yield provider
