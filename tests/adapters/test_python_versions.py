"""Which framework adapters work on which Python: LangChain's from 3.10 (the ``langchain``
extra installs langchain-core 1.7 and langgraph there), deep agents' and pydantic-ai's from
3.11 only, and on 3.10 importing them says so instead of a bare ``ModuleNotFoundError``."""

from __future__ import annotations

import sys

import pytest

import dsh_fs.adapters


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="the refusal is Python 3.10's")
@pytest.mark.parametrize(
    ("name", "extra"), [("WorkspaceBackend", "deepagents"), ("WorkspaceToolset", "pydantic-ai")]
)
def test_on_python_3_10_the_3_11_only_adapters_say_why_they_cannot_be_imported(
    name: str, extra: str
) -> None:
    with pytest.raises(ImportError, match=rf"needs Python 3\.11\+ \({extra} supports no older"):
        getattr(dsh_fs.adapters, name)


def test_the_langchain_adapter_imports_on_every_supported_python() -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    assert callable(dsh_fs.adapters.langchain_tools)
