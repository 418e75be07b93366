"""Claude's own editing tool, ``str_replace_based_edit_tool`` (``text_editor_20250728``).

Claude models are trained on this schema-less tool: ``view``, ``create``, ``str_replace`` and
``insert``. Each command runs through the workspace's tools, so the observation policy, the
provider's critical sections and the fence apply unchanged: ``view`` of a file is `read`
(and authorizes later changes), ``create`` is `write` (an existing file needs a prior
``view``), ``str_replace`` is `edit`, and ``insert`` is the internal `insert` tool under the
edit guard. ``view`` of a directory lists it two levels deep through the provider, as the
vendor's reference implementation does; listing records no observation.

Output follows the vendor: numbered lines (``<n>: <text>``, as the tool's documentation
shows them), ``File created successfully at: <path>``, and for edits a numbered snippet of
the changed region. Failures keep their code and are worded in the tool's own commands.

A command runs only when the workspace offers the tool that grants it (`DialectGrants`):
``view`` needs `read`, ``create`` `write`, ``str_replace`` `edit`, ``insert`` `edit` or
`write`; a read-only workspace answers every change with a refusal, and nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

from dsh_fs.errors import FsError, FsErrorCode, ToolErrorCode
from dsh_fs.fs import FileSystem, FsDirEntry, FsFileType, FsTarget

from ._images import image_of
from ._vocabulary import Vocabulary, numbered, snippet

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.tools import DialectOperation, ImageValue
    from dsh_fs.workspace import Session

__all__ = [
    "TEXT_EDITOR_NAME",
    "TEXT_EDITOR_TYPE",
    "EditorOutcome",
    "TextEditorTool",
    "run_text_editor",
    "text_editor_tool",
]

TEXT_EDITOR_NAME: Final = "str_replace_based_edit_tool"
"""The tool name Claude calls (fixed by the API)."""
TEXT_EDITOR_TYPE: Final = "text_editor_20250728"
"""The tool version for Claude 4 models and later."""

COMMANDS: Final = ("view", "create", "str_replace", "insert")
"""The commands of ``text_editor_20250728`` (``undo_edit`` is gone from this version)."""

_OPERATIONS: Final[dict[str, DialectOperation]] = {
    "view": "view",
    "create": "create",
    "str_replace": "replace",
    "insert": "change",
}
"""What each command does, for the workspace's `DialectGrants`."""

VIEW_LINES: Final = 2000
"""At most this many lines per ``view`` (the `read` tool's cap); a footer says how to go on."""
TREE_ENTRIES: Final = 1000
"""At most this many entries in a directory ``view``."""

VOCABULARY: Final = Vocabulary(
    phrases=(
        ("old_string was not found in ", "No replacement was performed: old_str was not found in "),
        ("old_string matched ", "No replacement was performed: old_str matched "),
        (
            "; provide a more specific old_string or set replace_all to true",
            "; include more surrounding lines in old_str so that it matches exactly once",
        ),
        ("edit requires reading ", "editing requires viewing "),
        ("without reading it first", "without viewing it first"),
        ("offset ", "view_range start "),
        ("insert line ", "insert_line "),
    ),
    remedies={
        FsErrorCode.STALE_VERSION.value: "view the file again, then retry",
        FsErrorCode.NOT_OBSERVED.value: "view the file, then retry",
    },
)
"""Our failures in the text editor's words: ``view``, ``old_str``, ``insert_line``."""


class TextEditorTool(TypedDict):
    """The text editor's tool definition (``anthropic.types.ToolTextEditor20250728Param``)."""

    type: Literal["text_editor_20250728"]
    name: Literal["str_replace_based_edit_tool"]


def text_editor_tool() -> TextEditorTool:
    """``{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}``."""
    return {"type": TEXT_EDITOR_TYPE, "name": TEXT_EDITOR_NAME}


@dataclass(frozen=True, slots=True, kw_only=True)
class EditorOutcome:
    """What one text editor command produced."""

    text: str
    """The ``tool_result`` content."""
    is_error: bool = False
    """Whether the command failed (nothing changed)."""
    code: str | None = None
    """On failure, the machine-routable code (``FS_STALE_VERSION``, ``INVALID_ARGS`` …)."""
    image: ImageValue | None = None
    """A ``view`` of an image: the image (the ``tool_result`` carries it as an image block;
    `text` describes it)."""


def _invalid(message: str) -> EditorOutcome:
    return EditorOutcome(text=f"Error: {message}", is_error=True, code="INVALID_ARGS")


def _failed(result: ToolResult) -> EditorOutcome:
    return EditorOutcome(
        text=VOCABULARY.reword(result.text, result.code), is_error=True, code=result.code
    )


async def run_text_editor(
    session: Session, arguments: object, *, call_id: str | None = None
) -> EditorOutcome:
    """Carry out one ``str_replace_based_edit_tool`` call in `session`.

    Never raises for a bad call: malformed input (not an object, an unknown command, a
    missing or mistyped parameter) and every tool failure come back as an error outcome,
    and nothing on disk changes.

    Args:
        session: The observation owner (one per conversation).
        arguments: The ``tool_use`` block's ``input``.
        call_id: The ``tool_use`` block's id, passed to the tool execution.
    """
    if not isinstance(arguments, Mapping):
        return _invalid("the input must be an object with a command and a path")
    command = arguments.get("command")
    if command not in COMMANDS:
        return _invalid(
            f"Unrecognized command {command!r}. The allowed commands for the "
            f"{TEXT_EDITOR_NAME} tool are: {', '.join(COMMANDS)}"
        )
    path = arguments.get("path")
    if not isinstance(path, str) or not path.strip():
        return _invalid(f"Parameter `path` is required for command: {command}")
    grants = session.workspace.dialects
    if not grants.allows(_OPERATIONS[command]):
        return EditorOutcome(
            text=f"Error: {grants.refusal(f'The {command} command', _OPERATIONS[command])}",
            is_error=True,
            code=ToolErrorCode.UNKNOWN_TOOL.value,
        )
    call = _Caller(session, call_id)
    if command == "view":
        return await _view(call, path, arguments.get("view_range"))
    if command == "create":
        return await _create(call, path, arguments)
    if command == "str_replace":
        return await _str_replace(call, path, arguments)
    return await _insert(call, path, arguments)


@dataclass(frozen=True, slots=True)
class _Caller:
    """The session and the call id every tool call of one command carries."""

    session: Session
    call_id: str | None

    async def __call__(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        internal = name in ("insert", "patch", "delete_file")
        return await self.session.call(name, arguments, call_id=self.call_id, internal=internal)


def _view_range(raw: object) -> tuple[int, int] | EditorOutcome:
    """The 1-based first line and the last line (-1: the end)."""
    if not (
        isinstance(raw, list)
        and len(raw) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
    ):
        return _invalid("Invalid `view_range`. It should be a list of two integers.")
    start, end = raw[0], raw[1]
    if start < 1:
        return _invalid(f"Invalid `view_range`: {raw}. Its first element should be at least 1.")
    if end != -1 and end < start:
        return _invalid(
            f"Invalid `view_range`: {raw}. Its second element `{end}` should be -1 or at "
            f"least its first `{start}`."
        )
    return start, end


async def _view(call: _Caller, path: str, raw_range: object) -> EditorOutcome:
    start, end = 1, -1
    if raw_range is not None:
        parsed = _view_range(raw_range)
        if isinstance(parsed, EditorOutcome):
            return parsed
        start, end = parsed
    wanted = VIEW_LINES if end == -1 else min(VIEW_LINES, end - start + 1)
    # Without a view_range the read is not windowed, so an image is an image.
    window = {} if raw_range is None else {"offset": start, "limit": wanted}
    result = await call("read", {"file_path": path, **window})
    if result.is_error:
        if result.code == FsErrorCode.NOT_REGULAR_FILE.value:
            listing = await _view_directory(call.session, path, raw_range)
            if listing is not None:
                return listing
        return _failed(result)
    image = image_of(result)
    if image is not None:
        return EditorOutcome(text=result.text, image=image)
    value = result.value
    assert value is not None
    lines = [line["text"] for line in value["lines"]]
    total: int = value["total_lines"]
    if not lines:
        return EditorOutcome(text=f"The file {value['path']} is empty.")
    text = numbered(lines, start)
    last = start + len(lines) - 1
    asked_end = total if end == -1 else min(end, total)
    if last < asked_end:
        text += (
            f"\n\n(Showing lines {start}-{last} of {total}. "
            f"Use view_range [{last + 1}, {end}] to continue.)"
        )
    return EditorOutcome(text=text)


async def _view_directory(session: Session, path: str, raw_range: object) -> EditorOutcome | None:
    """The directory at `path`, two levels deep, hidden entries left out; None when `path`
    is not a directory (the read's failure then stands)."""
    fs = session.fs
    try:
        target = await fs.resolve(path, session.cwd)
        info = await fs.stat(target)
        if info is None or info.type is not FsFileType.DIRECTORY:
            return None
        if raw_range is not None:
            return _invalid(
                "The `view_range` parameter is not allowed when `path` points to a directory."
            )
        entries = await _tree(session, target)
    except FsError as error:
        return EditorOutcome(
            text=VOCABULARY.reword(f"Error: {error.message}", error.code.value),
            is_error=True,
            code=error.code.value,
        )
    shown, total, expanded = entries
    body = "\n".join([target.display_path, *shown])
    if total > len(shown):
        body += (
            f"\n(Showing {len(shown)} of {total} entries.)"
            if expanded
            else f"\n(Showing {len(shown)} of {total} entries at the top level; subdirectories "
            "are not expanded. View a subdirectory to see inside it.)"
        )
    return EditorOutcome(
        text=f"Here's the files and directories up to 2 levels deep in {target.display_path}, "
        f"excluding hidden items:\n{body}\n"
    )


async def _tree(session: Session, directory: FsTarget) -> tuple[list[str], int, bool]:
    """The first `TREE_ENTRIES` display paths two levels under `directory` (parents before
    children, by name; no hidden names; symbolic links listed, not followed), how many there
    are in all, and whether the second level is included.

    The total is exact, and only shown entries (and hidden names) are looked at: a top level
    with more than `TREE_ENTRIES` visible children is shown alone, counted by its names.
    """
    fs = session.fs
    top, top_total = await _visible_first(fs, directory, TREE_ENTRIES)
    if top_total > TREE_ENTRIES:
        return [await _child(fs, directory, entry.name) for entry in top], top_total, False
    found: list[str] = []
    total = top_total
    for entry in top:
        child = await _child_target(fs, directory, entry.name)
        if len(found) < TREE_ENTRIES:
            found.append(child.display_path)
        if entry.type is FsFileType.DIRECTORY:
            inner, inner_total = await _visible_first(fs, child, TREE_ENTRIES - len(found))
            total += inner_total
            for grandchild in inner:
                found.append(await _child(fs, child, grandchild.name))
    return found, total, True


async def _child_target(fs: FileSystem, directory: FsTarget, name: str) -> FsTarget:
    return await fs.resolve(f"{directory.display_path.rstrip('/')}/{name}")


async def _child(fs: FileSystem, directory: FsTarget, name: str) -> str:
    return (await _child_target(fs, directory, name)).display_path


async def _visible_first(
    fs: FileSystem, directory: FsTarget, limit: int
) -> tuple[list[FsDirEntry], int]:
    """The first `limit` children of `directory` whose names are not hidden (by name), and
    how many such children it has.

    Built on `list_dir_first`, which counts every name but looks only at the first ones:
    hidden names sort together (they all start with ``.``), so the prefix is widened until it
    reaches past them, and they are subtracted from the count.
    """
    ask = max(limit, 0) + 16
    while True:
        listing = await fs.list_dir_first(directory, ask)
        complete = len(listing.entries) >= listing.total
        hidden = sum(1 for entry in listing.entries if entry.name.startswith("."))
        visible = [entry for entry in listing.entries if not entry.name.startswith(".")]
        past_hidden = bool(listing.entries) and listing.entries[-1].name[:1] > "."
        if complete or (past_hidden and len(visible) >= limit):
            return visible[: max(limit, 0)], listing.total - hidden
        ask *= 2


def _text_param(arguments: Mapping[str, Any], name: str, command: str) -> str | EditorOutcome:
    value = arguments.get(name)
    if value is None:
        return _invalid(f"Parameter `{name}` is required for command: {command}")
    if not isinstance(value, str):
        return _invalid(f"Parameter `{name}` must be a string")
    return value


async def _create(call: _Caller, path: str, arguments: Mapping[str, Any]) -> EditorOutcome:
    content = _text_param(arguments, "file_text", "create")
    if isinstance(content, EditorOutcome):
        return content
    result = await call("write", {"file_path": path, "content": content})
    if result.is_error:
        return _failed(result)
    value = result.value
    assert value is not None
    if value["operation"] == "create":
        return EditorOutcome(text=f"File created successfully at: {value['path']}")
    return EditorOutcome(text=f"File overwritten successfully at: {value['path']}")


async def _str_replace(call: _Caller, path: str, arguments: Mapping[str, Any]) -> EditorOutcome:
    old = _text_param(arguments, "old_str", "str_replace")
    if isinstance(old, EditorOutcome):
        return old
    new = arguments.get("new_str", "")
    if new is None:
        new = ""
    if not isinstance(new, str):
        return _invalid("Parameter `new_str` must be a string")
    if not old:
        return _invalid("Parameter `old_str` must not be empty for command: str_replace")
    if old == new:
        return _invalid("Parameter `new_str` must differ from `old_str`: nothing would change")
    result = await call("edit", {"file_path": path, "old_string": old, "new_string": new})
    return _edited(result, "Review the changes and make sure they are as expected.")


async def _insert(call: _Caller, path: str, arguments: Mapping[str, Any]) -> EditorOutcome:
    line = arguments.get("insert_line")
    if line is None:
        return _invalid("Parameter `insert_line` is required for command: insert")
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        return _invalid("Parameter `insert_line` must be a non-negative integer")
    # The tool's documentation has named the text both `new_str` and `insert_text`.
    name = "new_str" if "new_str" in arguments else "insert_text"
    text = _text_param(arguments, name, "insert")
    if isinstance(text, EditorOutcome):
        if name == "insert_text":
            return _invalid("Parameter `new_str` is required for command: insert")
        return text
    result = await call("insert", {"file_path": path, "insert_line": line, "text": text})
    return _edited(
        result,
        "Review the changes and make sure they are as expected (correct indentation, no "
        "duplicate lines, etc).",
    )


def _edited(result: ToolResult, review: str) -> EditorOutcome:
    """A change's answer: the failure in the tool's words, or a numbered snippet of the
    changed region followed by `review` (the vendor's sentence for the command)."""
    if result.is_error:
        return _failed(result)
    value = result.value
    assert value is not None
    return EditorOutcome(
        text=f"The file {value['path']} has been edited. Here is a snippet of the edited file:\n"
        f"{snippet(value['before'], value['after'])}\n"
        f"{review} Edit the file again if necessary."
    )
