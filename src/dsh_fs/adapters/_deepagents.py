"""LangChain's deep agents: a `BackendProtocol` whose every operation is a workspace tool.

``create_deep_agent(model, backend=WorkspaceBackend(session))`` gives the agent its own
file tools (``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``,
``delete``), and each one runs through ours in one `Session`: the provider (local, sandbox,
fsspec), the fence, the path rules, the observation policy (a write over a file the agent
did not read, or an edit of a file that changed since its read, is refused) and the edit
miss's diagnosis all apply unchanged. A refusal is the result's ``error`` in our words
(``Error: …`` with the code's remedy); deep agents shows it to the model as an error tool
message.

Paths: deep agents gives every path as an absolute POSIX path. With ``virtual=True`` (the
default) ``/`` is the session's working directory (the workspace root), ``/src/app.py`` its
``src/app.py``, and the paths in results are given back the same way; a path spelled as
our messages spell it (the root's own absolute path, then more) is taken as it is. With
``virtual=False`` paths go to the tools unchanged.

What differs from deep agents' own backends, on purpose: `grep` matches the literal text by
our grep (its ``glob`` is our ``include``, a name glob); `glob` follows our glob (a pattern
without ``/`` matches names at any depth); `delete` removes a file, an empty directory or a
link (never a tree); `upload_files` creates UTF-8 text files through the write tool (an
existing file must have been read by the session), and `download_files` reads through the
provider (the fence applies; nothing is observed). Needs ``pip install 'dsh-fs[deepagents]'``.
"""

from __future__ import annotations

import base64
import functools
import posixpath
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsFileType, FsTarget

from ._images import image_of
from ._runner import SessionRunner

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Session

    from ._sync import SyncSession

__all__ = ["DOWNLOAD_MAX_BYTES", "WorkspaceBackend"]

T = TypeVar("T")

READ_LIMIT: Final = 2000
"""The read tool's most lines per call (deep agents' default window is the same)."""
DOWNLOAD_MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest file `download_files` returns (a larger one is an error, never cut)."""

_REGEX_SPECIAL: Final = frozenset("\\.+*?()|[]{}^$#&-~")
"""What our grep's regular expressions (ripgrep's syntax, RE2 without it) treat as syntax."""

_SAYS_NO_LINES_REQUESTED: Final = "no_lines_requested" in ReadResult.__dataclass_fields__
"""Whether the installed deepagents tells a zero-line window from an empty file (later 0.7
releases; 0.7.0 does not)."""

_DOWNLOAD_ERRORS: Final = {
    FsErrorCode.NOT_FOUND: "file_not_found",
    FsErrorCode.PERMISSION_DENIED: "permission_denied",
    FsErrorCode.SANDBOX_DENIED: "permission_denied",
}
"""Our codes that are one of the protocol's `FileOperationError` words."""


def literal_pattern(text: str) -> str:
    """A regular expression matching `text` literally (deep agents' grep is literal)."""
    return "".join(f"\\{char}" if char in _REGEX_SPECIAL else char for char in text)


def _without_prefix(text: str) -> str:
    """Our ``Error: …`` for a result whose caller adds ``Error: `` itself."""
    return text.removeprefix("Error: ")


class WorkspaceBackend(BackendProtocol):
    """A deep agents backend on one workspace `Session`.

    Args:
        session: The observation owner (one per conversation): a `Session` for agents run
            with ``ainvoke``/``astream``, a `SyncSession` for ``invoke`` (or both).
        virtual: ``/`` is the session's working directory (the default); False passes
            paths through unchanged.
    """

    def __init__(self, session: Session | SyncSession, *, virtual: bool = True) -> None:
        self._runner = SessionRunner(session)
        self.virtual = virtual
        """Whether ``/`` is the working directory."""
        self._root: str | None = None

    @property
    def session(self) -> Session:
        """The observation owner every operation runs in."""
        return self._runner.session

    # -- paths ---------------------------------------------------------------------------

    async def _root_path(self) -> str:
        """The working directory's display path (what our messages call it)."""
        if self._root is None:
            target = await self.session.fs.resolve(".", self.session.cwd)
            self._root = target.display_path
        return self._root

    async def _ours(self, path: str | None) -> str | None:
        """The agent's path as our tools take it."""
        if path is None or not self.virtual:
            return path
        root = await self._root_path()
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return path
        relative = posixpath.normpath(path).lstrip("/")
        return relative if relative not in ("", ".") else "."

    async def _theirs(self, path: str) -> str:
        """One of our paths (absolute, or relative to the working directory) as the agent
        spells paths."""
        root = await self._root_path()
        absolute = path if posixpath.isabs(path) else posixpath.join(root, path)
        if not self.virtual:
            return absolute
        if absolute == root:
            return "/"
        prefix = root.rstrip("/") + "/"
        if absolute.startswith(prefix):
            return "/" + absolute[len(prefix) :]
        return absolute

    def _blocking(self, func: Callable[[], Awaitable[T]], what: str) -> T:
        return self._runner.run_blocking(func, f"WorkspaceBackend.{what}")

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return await self._runner.call(name, arguments)

    async def _on_loop(self, func: Callable[[], Awaitable[T]]) -> T:
        return await self._runner.run(func)

    # -- ls ------------------------------------------------------------------------------

    def ls(self, path: str) -> LsResult:
        """The directory's entries (our list tool)."""
        return self._blocking(functools.partial(self._ls, path), "ls")

    async def als(self, path: str) -> LsResult:
        """The directory's entries (our list tool)."""
        return await self._on_loop(functools.partial(self._ls, path))

    async def _ls(self, path: str) -> LsResult:
        result = await self._call("list", {"path": await self._ours(path)})
        if result.is_error:
            return LsResult(error=_without_prefix(result.text))
        value = result.value
        assert value is not None
        directory = await self._theirs(value["path"])
        entries = [
            _info(
                posixpath.join(directory, entry["name"]),
                entry["type"] == "directory",
                size=entry["size"],
            )
            for entry in value["entries"]
        ]
        return LsResult(entries=entries)

    # -- read ----------------------------------------------------------------------------

    def read(self, file_path: str, offset: int = 0, limit: int = READ_LIMIT) -> ReadResult:
        """Lines ``offset`` (0-based) to ``offset + limit`` (our read tool, which records
        the read: it is what allows a later write or edit)."""
        return self._blocking(functools.partial(self._read, file_path, offset, limit), "read")

    async def aread(self, file_path: str, offset: int = 0, limit: int = READ_LIMIT) -> ReadResult:
        """Lines ``offset`` (0-based) to ``offset + limit`` (our read tool)."""
        return await self._on_loop(functools.partial(self._read, file_path, offset, limit))

    async def _read(self, file_path: str, offset: int, limit: int) -> ReadResult:
        if limit <= 0:  # the protocol's degenerate window: nothing read
            nothing = ReadResult(file_data=_data("", "utf-8"))
            if _SAYS_NO_LINES_REQUESTED:
                nothing.no_lines_requested = True
            return nothing
        arguments: dict[str, Any] = {"file_path": await self._ours(file_path)}
        # The whole file unwindowed, so that an image is read as an image.
        if offset > 0:
            arguments["offset"] = offset + 1
        if limit < READ_LIMIT:
            arguments["limit"] = limit
        result = await self._call("read", arguments)
        if result.is_error:
            return ReadResult(error=_without_prefix(result.text))
        image = image_of(result)
        if image is not None:
            content = base64.b64encode(image.data).decode("ascii")
            return ReadResult(file_data=_data(content, "base64"))
        value = result.value
        assert value is not None
        lines: list[str] = [line["text"] for line in value["lines"]]
        data = _data("\n".join(lines), "utf-8")
        if not lines:
            return ReadResult(file_data=data)
        start: int = value["offset"]
        end = start + len(lines) - 1
        total: int = value["total_lines"]
        return ReadResult(
            file_data=data,
            start_line=start,
            end_line=end,
            total_lines=total,
            next_offset=end if end < total else None,
        )

    # -- write, edit, delete -------------------------------------------------------------

    def write(self, file_path: str, content: str) -> WriteResult:
        """Create a file, or replace one the session read at its current version."""
        return self._blocking(functools.partial(self._write, file_path, content), "write")

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        """Create a file, or replace one the session read at its current version."""
        return await self._on_loop(functools.partial(self._write, file_path, content))

    async def _write(self, file_path: str, content: str) -> WriteResult:
        result = await self._call(
            "write", {"file_path": await self._ours(file_path), "content": content}
        )
        if result.is_error:
            return WriteResult(error=result.text)
        value = result.value
        assert value is not None
        return WriteResult(path=await self._theirs(value["path"]))

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        """Replace `old_string` in a file the session read at its current version; a miss
        says what in the file is closest and why it differs."""
        edit = functools.partial(self._edit, file_path, old_string, new_string, replace_all)
        return self._blocking(edit, "edit")

    async def aedit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        """`edit`, awaited."""
        return await self._on_loop(
            functools.partial(self._edit, file_path, old_string, new_string, replace_all)
        )

    async def _edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool
    ) -> EditResult:
        arguments: dict[str, Any] = {
            "file_path": await self._ours(file_path),
            "old_string": old_string,
            "new_string": new_string,
        }
        if replace_all:
            arguments["replace_all"] = True
        result = await self._call("edit", arguments)
        if result.is_error:
            return EditResult(error=result.text)
        value = result.value
        assert value is not None
        return EditResult(path=await self._theirs(value["path"]), occurrences=value["replacements"])

    def delete(self, file_path: str) -> DeleteResult:
        """Delete a file the session read at its current version, an empty directory or a
        link (our delete tool: never a tree)."""
        return self._blocking(functools.partial(self._delete, file_path), "delete")

    async def adelete(self, file_path: str) -> DeleteResult:
        """`delete`, awaited."""
        return await self._on_loop(functools.partial(self._delete, file_path))

    async def _delete(self, file_path: str) -> DeleteResult:
        result = await self._call("delete", {"file_path": await self._ours(file_path)})
        if result.is_error:
            return DeleteResult(error=result.text)
        return DeleteResult(path=file_path)

    # -- grep, glob ----------------------------------------------------------------------

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        """Lines containing `pattern` literally (our grep; `glob` filters file names)."""
        search = functools.partial(self._grep, pattern, path, glob, max_count)
        return self._blocking(search, "grep")

    async def agrep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        """`grep`, awaited."""
        return await self._on_loop(functools.partial(self._grep, pattern, path, glob, max_count))

    async def _grep(
        self, pattern: str, path: str | None, glob: str | None, max_count: int | None
    ) -> GrepResult:
        arguments: dict[str, Any] = {"pattern": literal_pattern(pattern)}
        searched = await self._ours(path)
        if searched is not None:
            arguments["path"] = searched
        if glob is not None:
            arguments["include"] = glob
        result = await self._call("grep", arguments)
        if result.is_error:
            return GrepResult(error=result.text)
        value = result.value
        assert value is not None
        matches = [
            _match(await self._theirs(match["path"]), match["line_number"], match["line"])
            for match in value["matches"]
        ]
        truncated = value["total"] > len(matches)
        if max_count is not None and len(matches) > max_count:
            matches, truncated = matches[:max_count], True
        return GrepResult(matches=matches, truncated=truncated)

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Files whose paths match `pattern` (our glob)."""
        return self._blocking(functools.partial(self._glob, pattern, path), "glob")

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        """`glob`, awaited."""
        return await self._on_loop(functools.partial(self._glob, pattern, path))

    async def _glob(self, pattern: str, path: str | None) -> GlobResult:
        arguments: dict[str, Any] = {"pattern": pattern}
        searched = await self._ours(path)
        if searched is not None:
            arguments["path"] = searched
        result = await self._call("glob", arguments)
        if result.is_error:
            return GlobResult(error=_without_prefix(result.text))
        value = result.value
        assert value is not None
        found = [_info(await self._theirs(path), is_dir=False) for path in value["paths"]]
        truncated = value["total"] > len(found)
        return GlobResult(matches=found, truncated=truncated)

    # -- upload, download ----------------------------------------------------------------

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Create UTF-8 text files through the write tool, one response per file."""
        return self._blocking(functools.partial(self._upload, files), "upload_files")

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """`upload_files`, awaited."""
        return await self._on_loop(functools.partial(self._upload, files))

    async def _upload(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        responses: list[FileUploadResponse] = []
        for path, content in files:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError:
                responses.append(
                    FileUploadResponse(
                        path=path, error="Error: the workspace stores UTF-8 text only"
                    )
                )
                continue
            written = await self._write(path, text)
            responses.append(FileUploadResponse(path=path, error=written.error))
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """The files' bytes, read through the provider (the fence applies)."""
        return self._blocking(functools.partial(self._download, paths), "download_files")

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """`download_files`, awaited."""
        return await self._on_loop(functools.partial(self._download, paths))

    async def _download(self, paths: list[str]) -> list[FileDownloadResponse]:
        fs = self.session.fs
        responses: list[FileDownloadResponse] = []
        for path in paths:
            target: FsTarget | None = None
            try:
                target = await fs.resolve(await self._ours(path) or ".", self.session.cwd)
                content = await fs.read_bytes(target, DOWNLOAD_MAX_BYTES)
            except FsError as error:
                word = _DOWNLOAD_ERRORS.get(error.code)
                if target is not None and error.code is FsErrorCode.NOT_REGULAR_FILE:
                    info = await fs.stat(target)
                    if info is not None and info.type is FsFileType.DIRECTORY:
                        word = "is_directory"
                reason = word if word is not None else f"Error: {error.message}"
                responses.append(FileDownloadResponse(path=path, error=reason))
                continue
            responses.append(FileDownloadResponse(path=path, content=content))
        return responses


# The protocol's TypedDicts mark their optional keys `NotRequired`, which mypy checking for
# Python 3.10 does not see: built through casts.
def _info(path: str, is_dir: bool, size: int | None = None) -> FileInfo:
    info: dict[str, Any] = {"path": path, "is_dir": is_dir}
    if size is not None:
        info["size"] = size
    return cast("FileInfo", info)


def _data(content: str, encoding: str) -> FileData:
    return cast("FileData", {"content": content, "encoding": encoding})


def _match(path: str, line: int, text: str) -> GrepMatch:
    return cast("GrepMatch", {"path": path, "line": line, "text": text})
