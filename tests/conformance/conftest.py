"""The `put` fixture: every conformance test runs once per backend in `BACKENDS`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from .backends import BACKENDS, Backend, ProviderUnderTest


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
async def put(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ProviderUnderTest]:
    backend: Backend = request.param
    async with backend.factory(tmp_path) as provider:
        yield provider
