"""The `glob` tool: files by path pattern, oldest first, sampled across the tree when many.

It records no observation: finding a file never authorizes an edit (SPEC §8.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_fs.fs import VCS_DIRECTORIES, FsFileType, FsGlobQuery, messages
from dsh_fs.runtime import Context, ToolAnnotations, ToolExecution

from ._arguments import GLOB_PARAMS, GlobArguments, optional_path, positive_glob
from ._collect import PathCollector
from ._engine import glob_tree
from ._globs import compile_path_glob
from ._render import MAX_PATHS, render_glob
from ._searching import SearchTool, locate, so_far
from ._values import GlobValue

__all__ = ["DESCRIPTION", "PROMPT", "GlobTool"]

DESCRIPTION = (
    "Find files whose paths match a glob pattern (ripgrep globs: *, **, ?, [...], {a,b}). "
    'A pattern without "/" matches file names at any depth; one with "/" matches paths '
    "from the search directory. Returns files only, never directories, including hidden and "
    "git-ignored ones (version-control directories such as .git are left out), oldest "
    f"modification first; at most {MAX_PATHS} paths: a larger result is sampled across the "
    "top-level entries and says so. Read a file before editing it."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the glob tool — not shell find or ls -R — to find files by path pattern. A pattern "
    'without "/" matches file names at any depth, so "*.py" searches the whole tree. '
    "Results are files only, oldest first; read a file before you edit it."
)
"""The tool's guidance section."""


class GlobTool(SearchTool[GlobArguments, GlobValue]):
    """`glob(pattern, path=None)`."""

    name = "glob"
    description = DESCRIPTION
    annotations = ToolAnnotations(
        title="Find files", read_only=True, destructive=False, idempotent=True
    )
    params = GLOB_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> GlobArguments:
        """`pattern` not blank and not negated; `path` not blank.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        pattern = positive_glob(raw["pattern"])
        path = optional_path(raw.get("path"))
        return GlobArguments(pattern=pattern, path=path)

    async def run(
        self, context: Context, execution: ToolExecution, args: GlobArguments
    ) -> GlobValue:
        """Check the pattern, then find the files below the directory.

        Raises:
            FsError: `SEARCH_INVALID_PATTERN`, `FS_NOT_FOUND`, `FS_NOT_DIRECTORY`,
                `FS_SANDBOX_DENIED`, `SEARCH_ABORTED`, and the provider's other errors.
        """
        glob = compile_path_glob(args.pattern)
        where = await locate(context, execution, args.path)
        fs, target, display = where.fs, where.target, where.target.display_path
        info = await fs.stat(target)
        if info is None:
            raise messages.not_found("search", display)
        if info.type is not FsFileType.DIRECTORY:
            raise messages.not_a_directory("search", display)
        found = PathCollector(MAX_PATHS)
        # Version-control metadata is never listed, even when asked for by path.
        if not _in_vcs_directory(display):
            async with self.searching(
                execution, display, "pattern or path", lambda: so_far(found.total, "path", "paths")
            ):
                native = (
                    fs.native_glob(target, FsGlobQuery(pattern=args.pattern))
                    if self.config.native
                    else None
                )
                if native is None:
                    await glob_tree(fs, target, glob, found)
                else:
                    async with native as batches:
                        async for batch in batches:
                            found.add_ordered(batch)
        paths, shown, entries = found.sample()
        return GlobValue(
            root=where.shown(),
            paths=tuple(where.shown(path) for path in paths),
            total=found.total,
            entries_shown=shown,
            entries_total=entries,
        )

    def render(self, value: GlobValue) -> str:
        """One path per line, with the ``(Showing …)`` footer when capped."""
        return render_glob(value)

    def to_json(self, value: GlobValue) -> dict[str, Any]:
        """``{root, paths, total, entries_shown, entries_total}``."""
        return value.to_json()


def _in_vcs_directory(display: str) -> bool:
    return any(part in VCS_DIRECTORIES for part in display.replace("\\", "/").split("/"))
