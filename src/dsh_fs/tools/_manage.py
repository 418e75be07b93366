"""File management for hosts without a shell (SPEC §10): `move`, `delete` and `mkdir`.

Same seam, fence, policy and error scheme as `edit`: a file is moved or deleted only at the
version its session saw (the move-intent and the delete-intent ask the policy), a move's
destination is guarded by the write-intent (an unread destination is never replaced), and
the provider does the rest in its critical section. Directories and symbolic links need no
read: a directory moves as a whole, is deleted only when empty, and a link is removed or
moved itself, never what it points to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS,
    FS_DELETE_INTENT,
    FS_MOVE_INTENT,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsFileType,
    FsIntent,
    FsTarget,
    Present,
    delete_dir_journaled,
    messages,
)
from dsh_fs.runtime import (
    Context,
    Plugin,
    PluginScope,
    PromptSection,
    ToolAnnotations,
    ToolExecution,
)

from ._arguments import non_blank, string_param
from ._base import FsTool, capture_for, observe, session_cwd
from ._values import DeleteValue, MkdirValue, MoveValue

__all__ = [
    "MANAGEMENT_TOOLS",
    "DeleteTool",
    "FileManagementPlugin",
    "MkdirTool",
    "MoveTool",
]

MANAGEMENT_TOOLS: tuple[str, ...] = ("move", "delete", "mkdir")
"""The file-management tools, in the order they are offered."""

MOVE_DESCRIPTION = (
    "Move or rename a file or a directory. A file must have been read in this session and "
    "be unchanged since; a directory moves as a whole without a read. The destination must "
    "not exist, unless it is a file you have read (it is then replaced). Missing parent "
    "directories of the destination are created."
)
MOVE_PROMPT = (
    "Use the move tool — not shell commands like mv — to rename or move files and "
    "directories. Read a file first (the default fs-observation-policy requires it); a "
    "directory moves as a whole without a read. The destination must not exist unless it "
    "is a file you have read, and missing parent directories are created."
)
DELETE_DESCRIPTION = (
    "Delete a file, an empty directory or a symbolic link. A file must have been read in "
    "this session and be unchanged since; a directory must be empty; a link is removed "
    "itself, never what it points to."
)
DELETE_PROMPT = (
    "Use the delete tool — not shell commands like rm — to remove files, empty directories "
    "and symbolic links. Read a file first (the default fs-observation-policy requires it); "
    "delete the files in a directory before the directory itself. A link is removed "
    "itself, never what it points to."
)
MKDIR_DESCRIPTION = (
    "Create a directory and any missing parent directories. An existing directory is a success."
)
MKDIR_PROMPT = (
    "Use the mkdir tool to create a directory and its missing parents. It is only needed "
    "for an empty directory: write creates the parent directories of a new file itself."
)

_EntryType = Literal["file", "directory", "symlink"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveArguments:
    """Arguments of `move`, checked."""

    source_path: str
    destination_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PathArgument:
    """The one path of `delete` (``file_path``) or `mkdir` (``path``), checked."""

    path: str


def _names_an_entry(path: str, verb: messages.Verb) -> None:
    """A path whose last component is ``.`` or ``..`` names a directory by a relation:
    nothing a move or a delete could take away (and never the root by accident)."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if path.strip("/") and last in (".", ".."):
        raise messages.names_no_entry(verb, path)


def _entry_type(kind: FsFileType) -> _EntryType:
    if kind is FsFileType.DIRECTORY:
        return "directory"
    if kind is FsFileType.SYMLINK:
        return "symlink"
    return "file"


async def _missing_source(context: Context, execution: ToolExecution, source: FsTarget) -> FsError:
    """Why a move's source is not there: a path a rule denies is refused as every mutation
    naming it is (FS_SANDBOX_DENIED, SPEC §10: the rule matches the path, whether or not
    something is there, so it tells nothing a delete would not); a file this session read
    was removed by someone else since (FS_STALE_VERSION with the remedy, as a delete
    answers); else it is simply not found (never read, read absent, or no policy asks for
    reads)."""
    try:
        seen = await context.events.waterfall(
            FS_MOVE_INTENT, FsIntent(target=source, actor=execution), None
        )
    except FsError as error:
        if error.code is FsErrorCode.SANDBOX_DENIED:
            return error
        seen = None  # the policy's refusal of a missing file says no more
    if seen is not None:
        return messages.move_gone(source.display_path)
    return messages.not_found("move", source.display_path)


class MoveTool(FsTool[MoveArguments, MoveValue]):
    """`move(source_path, destination_path)`."""

    name = "move"
    description = MOVE_DESCRIPTION
    annotations = ToolAnnotations(title="Move file", destructive=True, idempotent=False)
    params = (
        string_param("source_path", "The file or directory to move.", non_empty=True),
        string_param(
            "destination_path",
            "Where it goes (the new path, not a folder to put it in).",
            non_empty=True,
        ),
    )

    def parse_values(self, raw: Mapping[str, Any]) -> MoveArguments:
        """Both paths not blank.

        Raises:
            ToolArgumentError: a blank path.
        """
        return MoveArguments(
            source_path=non_blank(raw["source_path"], "source_path"),
            destination_path=non_blank(raw["destination_path"], "destination_path"),
        )

    async def run(
        self, context: Context, execution: ToolExecution, args: MoveArguments
    ) -> MoveValue:
        """Ask the move-intent about a file source and the write-intent about the
        destination, move, and record the source absent and the destination present.

        Raises:
            FsError: `FS_NOT_OBSERVED`, `FS_STALE_VERSION`, `FS_ALREADY_EXISTS`,
                `FS_NOT_FOUND`, and the provider's errors.
        """
        fs = context.get(FS)
        cwd = session_cwd(execution)
        _names_an_entry(args.source_path, "move")
        _names_an_entry(args.destination_path, "move")
        source = await fs.resolve(args.source_path, cwd)
        destination = await fs.resolve(args.destination_path, cwd)
        info = await fs.lstat(args.source_path, cwd)
        if info is None:
            raise await _missing_source(context, execution, source)
        # The destination first: its intent never asks for a read, so a rule refusing it
        # speaks before the policy asks to read the source.
        guard = await context.events.waterfall(
            FS_WRITE_INTENT, FsIntent(target=destination, actor=execution), None
        )
        expected = None
        if info.type is FsFileType.FILE:
            expected = await context.events.waterfall(
                FS_MOVE_INTENT, FsIntent(target=source, actor=execution), None
            )
        guard = guard or CreateIfAbsent()
        capture = await capture_for(context, execution, destination)
        outcome = await fs.move(source, destination, expected, guard, capture=capture)
        if outcome.type is FsFileType.FILE:
            await observe(context, execution, source, Absent())
            if outcome.version is not None:
                await observe(context, execution, destination, Present(outcome.version))
        return MoveValue(
            source=source.display_path,
            destination=destination.display_path,
            type=_entry_type(outcome.type),
            replaced=outcome.replaced,
        )

    def render(self, value: MoveValue) -> str:
        """``Moved <src> to <dst>``."""
        return f"Moved {value.source} to {value.destination}"

    def to_json(self, value: MoveValue) -> dict[str, Any]:
        """``{source, destination, type, replaced}``."""
        return value.to_json()


class DeleteTool(FsTool[PathArgument, DeleteValue]):
    """`delete(file_path)`: a file read at its current version, an empty directory, a link."""

    name = "delete"
    description = DELETE_DESCRIPTION
    annotations = ToolAnnotations(title="Delete file", destructive=True, idempotent=False)
    params = (
        string_param(
            "file_path", "The file, empty directory or symbolic link to delete.", non_empty=True
        ),
    )

    def parse_values(self, raw: Mapping[str, Any]) -> PathArgument:
        """`file_path` not blank.

        Raises:
            ToolArgumentError: a blank `file_path`.
        """
        return PathArgument(path=non_blank(raw["file_path"], "file_path"))

    async def run(
        self, context: Context, execution: ToolExecution, args: PathArgument
    ) -> DeleteValue:
        """A link or a directory is removed as what it is (no read needed); anything else
        is a file delete guarded by the delete-intent, recorded absent.

        Raises:
            FsError: `FS_NOT_OBSERVED`, `FS_STALE_VERSION`, `FS_NOT_EMPTY`, `FS_NOT_FOUND`,
                and the provider's errors.
        """
        fs = context.get(FS)
        cwd = session_cwd(execution)
        _names_an_entry(args.path, "delete")
        target = await fs.resolve(args.path, cwd)
        info = await fs.lstat(args.path, cwd)
        if info is not None and info.type is FsFileType.SYMLINK:
            await fs.delete_link(target)
            return DeleteValue(path=target.display_path, type="symlink")
        if info is not None and info.type is FsFileType.DIRECTORY:
            # An empty directory's delete is journaled (undo makes it again); a link's is
            # not (nothing is kept to recreate it).
            capture = await capture_for(context, execution, target)
            if capture is None:
                await fs.delete_dir(target)
            else:
                now = await fs.stat(target)
                before = now.version if now is not None else None
                await delete_dir_journaled(fs, target, capture, before)
            return DeleteValue(path=target.display_path, type="directory")
        if info is not None and info.type is FsFileType.OTHER:
            # A FIFO, socket or device: refused as the provider refuses it, before the
            # policy asks for a read that could never succeed.
            raise messages.not_regular_file("delete", target.display_path)
        expected = await context.events.waterfall(
            FS_DELETE_INTENT, FsIntent(target=target, actor=execution), None
        )
        # A file's delete is journaled (undo brings it back from its pre-image).
        capture = await capture_for(context, execution, target)
        await fs.delete(target, expected, capture=capture)
        await observe(context, execution, target, Absent())
        return DeleteValue(path=target.display_path, type="file")

    def render(self, value: DeleteValue) -> str:
        """``Deleted <p>``."""
        return f"Deleted {value.path}"

    def to_json(self, value: DeleteValue) -> dict[str, Any]:
        """``{path, type}``."""
        return value.to_json()


class MkdirTool(FsTool[PathArgument, MkdirValue]):
    """`mkdir(path)`: a directory and its missing parents."""

    name = "mkdir"
    description = MKDIR_DESCRIPTION
    annotations = ToolAnnotations(title="Create directory", destructive=False, idempotent=True)
    params = (string_param("path", "The directory to create.", non_empty=True),)

    def parse_values(self, raw: Mapping[str, Any]) -> PathArgument:
        """`path` not blank.

        Raises:
            ToolArgumentError: a blank `path`.
        """
        return PathArgument(path=non_blank(raw["path"], "path"))

    async def run(
        self, context: Context, execution: ToolExecution, args: PathArgument
    ) -> MkdirValue:
        """Create it (no intent: nothing that exists is changed).

        Raises:
            FsError: `FS_NOT_DIRECTORY` (a file in the way), and the provider's errors.
        """
        fs = context.get(FS)
        try:
            target = await fs.resolve(args.path, session_cwd(execution))
        except FsError as error:
            # A path below a file names nothing (resolve says so): for mkdir that file is
            # in the way.
            if error.path is not None and (
                error.message == messages.parent_not_directory(error.path).message
            ):
                raise messages.mkdir_blocked(error.path) from error
            raise
        capture = await capture_for(context, execution, target)
        outcome = await fs.mkdir(target, capture=capture)
        return MkdirValue(path=target.display_path, created=outcome.created)

    def render(self, value: MkdirValue) -> str:
        """``Created directory <p>`` or ``Directory <p> already exists``."""
        if value.created:
            return f"Created directory {value.path}"
        return f"Directory {value.path} already exists"

    def to_json(self, value: MkdirValue) -> dict[str, Any]:
        """``{path, created}``."""
        return value.to_json()


class FileManagementPlugin(Plugin[None]):
    """`move`, `delete` and `mkdir` over the context's `fs` service, with their guidance.

    Apply with ``context.use(FileManagementPlugin(), None)`` after providing `FS`; the
    workspace applies it. Like the file tools they obey whatever policy answers the intents.
    """

    name = "fs-file-management"

    def __init__(self, names: tuple[str, ...] = MANAGEMENT_TOOLS) -> None:
        self.names = names
        """The tools registered."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Register the chosen tools and their prompt sections (ids ``tools:<name>``)."""
        for tool, prompt in (
            (MoveTool(), MOVE_PROMPT),
            (DeleteTool(), DELETE_PROMPT),
            (MkdirTool(), MKDIR_PROMPT),
        ):
            if tool.name not in self.names:
                continue
            scope.register_tool(tool)
            scope.add_prompt_section(PromptSection(id=f"tools:{tool.name}", text=prompt))
