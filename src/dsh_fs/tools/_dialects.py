"""Internal tools behind the vendors' editing dialects: `insert`, `patch`, `patch_files` and
`delete_file`.

They are not offered to models (`Tool.internal`): the adapters for Anthropic's text editor
and OpenAI's ``apply_patch`` call them, so every dialect operation runs through the same
intents, policy, provider and fence as `edit`. Insert and patch are `edit_text` changes
guarded by the edit-intent; patch_files is several patches as one change set (SPEC §13: all
or nothing, the same guards); delete_file is guarded by the delete-intent and records
`Absent`.

A dialect grants no power the workspace's tool selection withholds (`DialectGrants`): each
operation is offered and executed only when the workspace offers the tool that grants it,
and the plugin registers only the internal tools whose operation is granted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    FS,
    FS_DELETE_INTENT,
    Absent,
    FsEdit,
    FsFileType,
    FsInsertRequest,
    FsIntent,
    FsPatchHunk,
    FsPatchRequest,
    PatchOp,
    messages,
)
from dsh_fs.runtime import (
    Context,
    Plugin,
    PluginScope,
    ToolAnnotations,
    ToolArgumentError,
    ToolExecution,
)

from ._arguments import Param, non_blank, string_param
from ._base import FsTool, capture_for, guarded_edit, observe, session_cwd
from ._changeset import MAX_SET_BYTES, ChangeSet
from ._values import DeleteValue, EditFilesValue, EditValue

__all__ = [
    "DeleteFileTool",
    "DialectGrants",
    "DialectOperation",
    "DialectToolsPlugin",
    "InsertTool",
    "PatchFilesTool",
    "PatchTool",
]

DialectOperation = Literal["view", "create", "replace", "change", "delete"]
"""What a dialect command does: ``view`` (read a file), ``create`` (write a whole file),
``replace`` (a literal replacement: the text editor's ``str_replace``), ``change`` (an insert or
a patch: ``insert``, ``update_file``), ``delete`` (``delete_file``)."""

_GRANTED_BY: Final[dict[DialectOperation, tuple[str, ...]]] = {
    "view": ("read",),
    "create": ("write",),
    "replace": ("edit",),
    "change": ("edit", "write"),
    "delete": ("delete", "write"),
}
"""The workspace tools that grant each operation (any one of them is enough)."""
_CHANGES: Final = frozenset({"create", "replace", "change", "delete"})


@dataclass(frozen=True, slots=True, kw_only=True)
class DialectGrants:
    """Which dialect operations a workspace offers and executes.

    Each operation is granted by a tool the workspace offers: ``view`` by `read`, ``create``
    by `write`, ``replace`` by `edit`, ``change`` (insert, patch) by `edit` or `write`,
    ``delete`` by a `delete` tool or `write`. A read-only provider grants no change at all.
    """

    offered: frozenset[str]
    """The names of the tools the workspace offers."""
    read_only: bool = False
    """The provider refuses every mutation (a read-only sandbox)."""

    @classmethod
    def of(cls, offered: Iterable[str], *, read_only: bool = False) -> DialectGrants:
        """The grants of a workspace offering the tools named `offered`."""
        return cls(offered=frozenset(offered), read_only=read_only)

    def allows(self, operation: DialectOperation) -> bool:
        """Whether `operation` is offered and may run."""
        if self.read_only and operation in _CHANGES:
            return False
        return any(name in self.offered for name in _GRANTED_BY[operation])

    def any_change(self) -> bool:
        """Whether some change (create, replace, change or delete) is granted."""
        return any(self.allows(operation) for operation in _GRANTED_BY if operation in _CHANGES)

    def refusal(self, command: str, operation: DialectOperation) -> str:
        """Why `command` (the dialect's word for `operation`) is refused:
        ``<command> is not offered in this workspace (…)``."""
        if self.read_only and operation in _CHANGES:
            reason = "the workspace is read-only"
        else:
            names = " or ".join(_GRANTED_BY[operation])
            tools = "tool" if len(_GRANTED_BY[operation]) == 1 else "tools"
            reason = f"it needs the {names} {tools}, which the workspace does not offer"
        return f"{command} is not offered in this workspace ({reason})"


ALL_GRANTED: Final = DialectGrants.of(("read", "write", "edit", "delete"))
"""Every operation (a stack composed by hand that offers all its tools)."""

_OPS: tuple[PatchOp, ...] = (" ", "-", "+")

MAX_PATCH_HUNKS: Final = 10_000
"""Hunks one patch may have; more is `INVALID_ARGS` (split the patch)."""
MAX_PATCH_LINES: Final = 200_000
"""Hunk lines (context, removed, added, anchors) one patch may have in all."""


def _path_param(description: str) -> Param:
    return string_param("file_path", description, non_empty=True)


_INSERT_PARAMS = (
    _path_param("Path of the file to insert into."),
    Param(
        name="insert_line",
        type="number",
        required=True,
        schema={
            "type": "integer",
            "description": "The line the text goes after (0: the top).",
            "minimum": 0,
        },
    ),
    string_param("text", "The text to insert, as whole lines."),
)

_HUNK_SCHEMA = {
    "type": "object",
    "properties": {
        "anchors": {
            "type": "array",
            "description": "Lines to find first, in order.",
            "items": {"type": "string"},
            "default": [],
        },
        "lines": {
            "type": "array",
            "description": 'Hunk lines, each starting with " ", "-" or "+".',
            "items": {"type": "string"},
        },
        "at_end": {
            "type": "boolean",
            "description": "The old lines end the file.",
            "default": False,
        },
    },
    "required": ["lines"],
    "additionalProperties": False,
}

_PATCH_PARAMS = (
    _path_param("Path of the file to patch."),
    Param(
        name="hunks",
        type="array",
        required=True,
        schema={
            "type": "array",
            "description": "The hunks, in file order.",
            "items": _HUNK_SCHEMA,
            "minItems": 1,
        },
    ),
)

_DELETE_PARAMS = (_path_param("Path of the file to delete."),)

MAX_SET_PATCHES: Final = 100
"""The most patches one `patch_files` call applies (as `edit_files`' edits)."""

_PATCH_FILES_PARAMS = (
    Param(
        name="patches",
        type="array",
        required=True,
        schema={
            "type": "array",
            "description": (
                "The operations, each {file_path} with one of: hunks (a patch in place, "
                "with move_to: then moved), content (the file created, or a file read "
                "replaced), delete: true, or move_to alone; a file may come again."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "hunks": {"type": "array", "items": _HUNK_SCHEMA, "minItems": 1},
                    "content": {"type": "string"},
                    "delete": {"type": "boolean"},
                    "move_to": {"type": "string"},
                },
                "required": ["file_path"],
                "additionalProperties": False,
            },
            "minItems": 1,
        },
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetOperation:
    """One operation of a `patch_files` set, checked."""

    file_path: str
    """The file, as given."""
    edit: FsEdit | None = None
    """The patch applied in place; None: none."""
    content: str | None = None
    """The file's whole new content (created, or a file read replaced); None: none."""
    delete: bool = False
    """The file is deleted."""
    move_to: str | None = None
    """Where the file moves (after `edit`); None: it stays."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteArguments:
    """Arguments of `delete`, checked."""

    file_path: str
    """The path, as given."""


class _ChangeTool(FsTool[Any, EditValue]):
    """An `edit_text` change guarded by the edit-intent, like `edit`."""

    annotations = ToolAnnotations(destructive=True, idempotent=False)
    internal = True

    def __init__(self, *, placeholders: bool = True) -> None:
        super().__init__()
        self.placeholders = placeholders
        """Refuse a patch whose new lines stand for lines it deletes (SPEC §8.3; an insert
        deletes nothing)."""

    async def run(self, context: Context, execution: ToolExecution, args: Any) -> EditValue:
        """Ask the edit-intent for a version guard, change the text, record the new version.

        Raises:
            FsError: the edit-intent's refusals, `FS_STALE_VERSION`, `FS_EDIT_NOT_FOUND`,
                `FS_NOT_FOUND` (an insert past the end), and the provider's errors.
        """
        file_path, change = args
        target, outcome = await guarded_edit(
            context, execution, file_path, change, placeholders=self.placeholders
        )
        return EditValue(
            path=target.display_path,
            before=outcome.before,
            after=outcome.after,
            replacements=outcome.replacements,
        )

    def render(self, value: EditValue) -> str:
        """One sentence (the adapters render the dialect's own text from the value)."""
        return f"The file {value.path} has been updated successfully."

    def to_json(self, value: EditValue) -> dict[str, Any]:
        """``{path, before, after, replacements, replace_all}``."""
        return value.to_json()


class InsertTool(_ChangeTool):
    """`insert(file_path, insert_line, text)`: whole lines after a line (0: the top)."""

    name = "insert"
    description = "Insert text as whole lines after a line of an existing text file."
    params = _INSERT_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> tuple[str, FsEdit]:
        """`file_path` not blank, `insert_line` a whole number of at least 0.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        line = raw["insert_line"]
        if isinstance(line, float) and line.is_integer():
            line = int(line)
        if not isinstance(line, int) or line < 0:
            raise ToolArgumentError("insert_line must be a non-negative integer")
        return file_path, FsInsertRequest(line=line, text=raw["text"])


class PatchTool(_ChangeTool):
    """`patch(file_path, hunks)`: hunks located by exact lines, applied all or nothing."""

    name = "patch"
    description = "Apply hunks located by exact context lines to an existing text file."
    params = _PATCH_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> tuple[str, FsEdit]:
        """`file_path` not blank; at least one hunk, each with lines that start with
        `` ``, ``-`` or ``+``.

        Raises:
            ToolArgumentError: the first rule broken.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        hunks = raw["hunks"]
        if not hunks:
            raise ToolArgumentError("hunks must be a non-empty array")
        if len(hunks) > MAX_PATCH_HUNKS:
            raise ToolArgumentError(
                f"a patch may have at most {MAX_PATCH_HUNKS} hunks, this one has {len(hunks)}; "
                "split it into several patches"
            )
        size = sum(_hunk_size(hunk) for hunk in hunks)
        if size > MAX_PATCH_LINES:
            raise ToolArgumentError(
                f"a patch may have at most {MAX_PATCH_LINES} lines in its hunks, this one has "
                f"{size}; split it into several patches"
            )
        return file_path, FsPatchRequest(
            hunks=tuple(_hunk(hunk, number) for number, hunk in enumerate(hunks, 1))
        )


def _hunk_size(raw: object) -> int:
    """Lines and anchors of a hunk in its JSON form (0 for a malformed one: `_hunk` says why)."""
    if not isinstance(raw, dict):
        return 0
    return sum(
        len(part) for part in (raw.get("lines"), raw.get("anchors")) if isinstance(part, list)
    )


def _hunk(raw: object, number: int) -> FsPatchHunk:
    """One hunk from its JSON form."""
    if not isinstance(raw, dict) or not set(raw) <= {"anchors", "lines", "at_end"}:
        raise ToolArgumentError(
            f"hunk {number} must be an object with lines and optional anchors and at_end"
        )
    anchors, lines, at_end = raw.get("anchors", []), raw.get("lines"), raw.get("at_end", False)
    if not isinstance(anchors, list) or not all(isinstance(a, str) for a in anchors):
        raise ToolArgumentError(f"hunk {number}: anchors must be an array of strings")
    if (
        not isinstance(lines, list)
        or not lines
        or not all(isinstance(line, str) and line[:1] in _OPS for line in lines)
    ):
        raise ToolArgumentError(
            f'hunk {number}: lines must be a non-empty array of strings starting with " ", '
            '"-" or "+"'
        )
    if not isinstance(at_end, bool):
        raise ToolArgumentError(f"hunk {number}: at_end must be a boolean")
    ops = tuple((cast(PatchOp, line[0]), line[1:]) for line in lines)
    return FsPatchHunk(anchors=tuple(anchors), lines=ops, at_end=at_end)


class PatchFilesTool(FsTool[tuple[SetOperation, ...], EditFilesValue]):
    """`patch_files(patches=[{file_path, hunks | content | delete | move_to}, …])`: several
    operations as one change set (SPEC §13), all or nothing: every patch, creation,
    deletion and move staged first (a file's operations in order), then published under
    each file's version guard (a new file only where none is); a failure is `edit <i> of
    <n> ("<p>"): …` with the operation's own error, and no file changes. ``apply_patch``
    sends a response's operations through it."""

    name = "patch_files"
    description = "Apply several patches, to one file or many, all or nothing."
    annotations = ToolAnnotations(destructive=True, idempotent=False)
    internal = True
    params = _PATCH_FILES_PARAMS

    def __init__(self, *, placeholders: bool = True, max_bytes: int = MAX_SET_BYTES) -> None:
        super().__init__()
        self.placeholders = placeholders
        """Refuse new lines that stand for lines the patch deletes (SPEC §8.3)."""
        self.max_bytes = max_bytes
        """The most UTF-8 bytes the files of one set may hold once patched."""
        self._patch = PatchTool(placeholders=placeholders)

    def parse_values(self, raw: Mapping[str, Any]) -> tuple[SetOperation, ...]:
        """1 to `MAX_SET_PATCHES` operations: a patch with `patch`'s rules (and maybe a
        `move_to`), a `content`, a `delete`, or a `move_to` alone (a problem is named with
        the operation's position).

        Raises:
            ToolArgumentError: the first rule broken.
        """
        patches = raw["patches"]
        count = len(patches)
        if not 1 <= count <= MAX_SET_PATCHES:
            raise ToolArgumentError(
                f"patches must hold 1 to {MAX_SET_PATCHES} patches, got {count}"
            )
        parsed = []
        for index, item in enumerate(patches, 1):
            try:
                if not isinstance(item, Mapping):
                    raise ToolArgumentError("invalid arguments: the patch must be an object")
                parsed.append(self._operation(item))
            except ToolArgumentError as error:
                raise ToolArgumentError(f"edit {index} of {count}: {error.message}") from None
        return tuple(parsed)

    def _operation(self, item: Mapping[str, Any]) -> SetOperation:
        """One operation, checked.

        Raises:
            ToolArgumentError: not exactly one kind of operation, or a bad part.
        """
        keys = set(item) - {"file_path", "move_to"}
        if not (keys <= {"hunks", "content", "delete"} and len(keys) <= 1) or not (
            keys or "move_to" in item
        ):
            raise ToolArgumentError(
                "invalid arguments: an operation has hunks, content, delete or move_to"
            )
        move_to = item.get("move_to")
        if move_to is not None:
            move_to = non_blank(move_to, "move_to") if isinstance(move_to, str) else None
            if move_to is None or keys - {"hunks"}:
                raise ToolArgumentError("invalid arguments: move_to must be a path, with hunks")
        if "hunks" in item:
            file_path, edit = self._patch.parse_arguments(
                {"file_path": item["file_path"], "hunks": item["hunks"]}
            )
            return SetOperation(file_path=file_path, edit=edit, move_to=move_to)
        file_path = non_blank(item["file_path"], "file_path")
        if "content" in item:
            if not isinstance(item["content"], str):
                raise ToolArgumentError("invalid arguments: content must be a string")
            return SetOperation(file_path=file_path, content=item["content"])
        if "delete" in item:
            if item["delete"] is not True:
                raise ToolArgumentError("invalid arguments: delete must be true")
            return SetOperation(file_path=file_path, delete=True)
        return SetOperation(file_path=file_path, move_to=move_to)

    async def run(
        self, context: Context, execution: ToolExecution, args: tuple[SetOperation, ...]
    ) -> EditFilesValue:
        """Stage every operation, then publish file by file under the version guards.

        Raises:
            FsError: the first failing operation's error, prefixed ``edit <i> of <n>
                ("<p>"): ``.
            ToolArgumentError: the files written are over the size bound.
        """
        changes = ChangeSet(
            context, execution, len(args), placeholders=self.placeholders, max_bytes=self.max_bytes
        )
        outputs: list[str] = []
        await changes.prefetch([op.file_path for op in args if op.edit is not None])
        for index, op in enumerate(args, 1):
            if op.content is not None:
                shown, created = await changes.stage_create(index, op.file_path, op.content)
                outputs.append(f"{'Created' if created else 'Updated'} file {shown}")
            elif op.delete:
                shown = await changes.stage_delete(index, op.file_path)
                outputs.append(f"Deleted file {shown}")
            else:
                shown = op.file_path
                if op.edit is not None:
                    shown = await changes.stage(index, op.file_path, op.edit)
                if op.move_to is None:
                    outputs.append(f"Updated file {shown}")
                else:
                    source, destination = await changes.stage_move(index, op.file_path, op.move_to)
                    verb = "Updated and moved" if op.edit is not None else "Moved"
                    outputs.append(f"{verb} file {source} to {destination}")
        changes.check_size()
        files = await changes.publish()
        group = changes.group if changes.journaled else None
        return EditFilesValue(files=files, group=group, outputs=tuple(outputs))

    def render(self, value: EditFilesValue) -> str:
        """One sentence (the adapter renders the dialect's own text from the value)."""
        return f"Patched {len(value.files)} files."

    def to_json(self, value: EditFilesValue) -> dict[str, Any]:
        """``{files, replacements, group}``."""
        return value.to_json()


class DeleteFileTool(FsTool[DeleteArguments, DeleteValue]):
    """`delete_file(file_path)`: remove a file this session saw, at the version it saw (the
    dialects' file delete; the model-facing `delete` is in `_manage`)."""

    name = "delete_file"
    description = "Delete a file you have read in this session, if it is unchanged since."
    annotations = ToolAnnotations(destructive=True, idempotent=False)
    internal = True
    params = _DELETE_PARAMS

    def parse_values(self, raw: Mapping[str, Any]) -> DeleteArguments:
        """`file_path` not blank.

        Raises:
            ToolArgumentError: a blank `file_path`.
        """
        file_path = non_blank(raw["file_path"], "file_path")
        return DeleteArguments(file_path=file_path)

    async def run(
        self, context: Context, execution: ToolExecution, args: DeleteArguments
    ) -> DeleteValue:
        """Ask the delete-intent for a version guard, delete, and record the absence.

        Raises:
            FsError: `FS_NOT_OBSERVED`, `FS_NOT_FOUND` (from the policy),
                `FS_STALE_VERSION`, and the provider's errors.
        """
        fs = context.get(FS)
        target = await fs.resolve(args.file_path, session_cwd(execution))
        info = await fs.lstat(args.file_path, session_cwd(execution))
        if info is not None and info.type is FsFileType.OTHER:
            # A FIFO, socket or device: refused as the provider refuses it, before the
            # policy asks for a read that could never succeed.
            raise messages.not_regular_file("delete", target.display_path)
        expected = await context.events.waterfall(
            FS_DELETE_INTENT, FsIntent(target=target, actor=execution), None
        )
        capture = await capture_for(context, execution, target)
        await fs.delete(target, expected, capture=capture)
        # A symbolic link is removed itself, never its target: the path now names the link's
        # own (absent) entry, and the target keeps whatever the session observed of it.
        try:
            gone = await fs.resolve(args.file_path, session_cwd(execution))
        except FsError:
            # The parent went away after the removal: nothing is left to record.
            return DeleteValue(path=target.display_path)
        await observe(context, execution, gone, Absent())
        return DeleteValue(path=target.display_path)

    def render(self, value: DeleteValue) -> str:
        """One sentence."""
        return f"The file {value.path} has been deleted."

    def to_json(self, value: DeleteValue) -> dict[str, Any]:
        """``{path}``."""
        return value.to_json()


class DialectToolsPlugin(Plugin[DialectGrants | None]):
    """The internal tools the dialect adapters call: `insert`, `patch`, `patch_files`,
    `delete_file`.

    Apply with ``context.use(DialectToolsPlugin(), grants)`` after providing `FS`; the
    workspace applies it with its `DialectGrants` (None: every operation). Only the tools
    whose operation is granted are registered (`insert`, `patch`, `patch_files`:
    ``change``; `delete`: ``delete``), so an operation the workspace withholds cannot run
    even when called directly. Like the file tools they obey whatever policy answers the intents.
    """

    name = "fs-dialect-tools"

    def __init__(self, *, placeholders: bool = True) -> None:
        self.placeholders = placeholders
        """`patch` refuses new lines that stand for the lines it deletes (SPEC §8.3)."""

    def apply(self, scope: PluginScope, config: DialectGrants | None) -> None:
        """Register the granted internal tools (no prompt sections: models never see them)."""
        grants = ALL_GRANTED if config is None else config
        tools: list[FsTool[Any, Any]] = []
        if grants.allows("change"):
            tools += [
                InsertTool(),
                PatchTool(placeholders=self.placeholders),
                PatchFilesTool(placeholders=self.placeholders),
            ]
        if grants.allows("delete"):
            tools.append(DeleteFileTool())
        for tool in tools:
            scope.register_tool(tool)
