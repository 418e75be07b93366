"""The `grep` tool: matching lines, through the provider's own searcher or the pure engine.

It records no observation: a match shows a line, never authorizes an edit (SPEC §8.1).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from dsh_fs.fs import FsFileType, FsGrepHit, FsGrepQuery, NativeSearchAbandoned, messages
from dsh_fs.runtime import Context, ToolAnnotations, ToolArgumentError, ToolExecution

from ._arguments import GREP_PARAMS, GrepArguments, check_include, optional_path
from ._collect import MatchCollector
from ._engine import grep_file, grep_tree
from ._globs import compile_name_glob
from ._lines import LineHit
from ._regex import compile_line_regex
from ._render import MAX_MATCHES, render_grep
from ._searching import LINE_BYTES, SearchTool, line_text, locate, so_far
from ._values import GrepMatch, GrepValue

__all__ = ["DESCRIPTION", "PROMPT", "GrepTool"]

DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax, case-sensitive; no "
    "lookaround or backreferences). Returns matching lines with their line numbers, grouped "
    f"by file in path order, at most {MAX_MATCHES} matches; lines longer than {LINE_BYTES} "
    "bytes are cut. Like ripgrep, it skips hidden files, binary files and what .gitignore "
    "or .ignore files exclude; a file named by path is always searched. Use read on a "
    "matched file for its context, and before editing it."
)
"""What the model reads about the tool."""

PROMPT = (
    "Use the grep tool — not shell grep or rg — to search file contents. A match shows one "
    "line and its number: read the file for surrounding context, and read it before editing "
    "it (a grep match does not count as reading the file)."
)
"""The tool's guidance section."""


class GrepTool(SearchTool[GrepArguments, GrepValue]):
    """`grep(pattern, path=None, include=None)`."""

    name = "grep"
    description = DESCRIPTION
    annotations = ToolAnnotations(
        title="Search file contents", read_only=True, destructive=False, idempotent=True
    )
    params = GREP_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> GrepArguments:
        """`pattern` not empty (white space is a pattern); `path` not blank; `include` one
        positive file-name glob.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        pattern = raw["pattern"]
        if not pattern:
            raise ToolArgumentError("pattern must be a non-empty string")
        path = optional_path(raw.get("path"))
        include = raw.get("include")
        if include is not None:
            check_include(include)
        return GrepArguments(pattern=pattern, path=path, include=include)

    async def run(
        self, context: Context, execution: ToolExecution, args: GrepArguments
    ) -> GrepValue:
        """Check the pattern, then search the file or the tree below the directory.

        Raises:
            FsError: `SEARCH_INVALID_PATTERN`, `FS_NOT_FOUND`, `FS_NOT_TEXT` (a binary file
                named by path), `FS_NOT_REGULAR_FILE`, `FS_SANDBOX_DENIED`,
                `SEARCH_ABORTED`, and the provider's other errors.
        """
        regex = compile_line_regex(args.pattern)
        include = compile_name_glob(args.include) if args.include is not None else None
        where = await locate(context, execution, args.path)
        fs, target, display = where.fs, where.target, where.target.display_path
        info = await fs.stat(target)
        if info is None:
            raise messages.not_found("search", display)
        found = MatchCollector(MAX_MATCHES)
        async with self.searching(
            execution,
            display,
            "pattern, path, or include",
            lambda: so_far(found.total, "match", "matches"),
        ):
            if info.type is FsFileType.FILE:
                scanner = await grep_file(fs, target, info.size, regex, LINE_BYTES, MAX_MATCHES)
                if scanner is None:
                    raise messages.binary_file("search", display)
                found.add("", scanner.hits, scanner.count)
            elif info.type is FsFileType.DIRECTORY:
                query = FsGrepQuery(
                    pattern=args.pattern, include=args.include, line_bytes=LINE_BYTES
                )
                native = fs.native_grep(target, query) if self.config.native else None
                if native is not None:
                    try:
                        await _collect_native(native, found)
                    except NativeSearchAbandoned:
                        found, native = MatchCollector(MAX_MATCHES), None  # search again
                if native is None:
                    await grep_tree(fs, target, query, regex, include, found)
            else:
                raise messages.not_regular_file("search", display)
        return GrepValue(
            matches=tuple(
                GrepMatch(
                    path=where.shown(rel),
                    line_number=hit.number,
                    line=line_text(hit.line, hit.truncated),
                    truncated=hit.truncated,
                )
                for rel, hit in found.matches()
            ),
            total=found.total,
        )

    def render(self, value: GrepValue) -> str:
        """``Found …``, then each file and its ``Line <n>: <text>`` lines."""
        return render_grep(value)

    def to_json(self, value: GrepValue) -> dict[str, Any]:
        """``{matches: [{path, line_number, line, truncated}], total}``."""
        return value.to_json()


async def _collect_native(
    native: AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]], found: MatchCollector
) -> None:
    """Add the hits of the provider's own searcher to `found`."""
    async with native as batches:
        async for batch in batches:
            for hit in batch:
                found.add(hit.path, (LineHit(hit.line_number, hit.line, hit.truncated),), 1)
