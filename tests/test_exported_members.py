"""The top-level public API: exactly these names, each importable."""

from __future__ import annotations

import dsh_fs


def test_the_top_level_exports_are_pinned() -> None:
    assert dsh_fs.__all__ == [
        "FsError",
        "FsErrorCode",
        "Session",
        "ToolResult",
        "Workspace",
        "__version__",
    ]


def test_every_exported_name_is_defined() -> None:
    for name in dsh_fs.__all__:
        assert getattr(dsh_fs, name) is not None, name


def test_public_classes_report_their_public_module() -> None:
    assert dsh_fs.Workspace.__module__ == "dsh_fs.workspace._workspace"
    assert isinstance(dsh_fs.__version__, str)
