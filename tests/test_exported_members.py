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


def test_the_lower_level_pieces_are_importable_to_compose_a_stack() -> None:
    from dsh_fs.policy import ObservationPolicy
    from dsh_fs.providers import LocalFileSystem
    from dsh_fs.runtime import Context
    from dsh_fs.tools import FsToolsPlugin

    assert ObservationPolicy.name == "fs-observation-policy"
    assert FsToolsPlugin.name == "fs-tools"
    assert callable(LocalFileSystem)
    assert callable(Context)
