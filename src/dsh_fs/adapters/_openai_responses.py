"""OpenAI's Responses API: function tools, and ``apply_patch`` executed behind the policy.

GPT-5-class models edit files with the built-in ``apply_patch`` tool: each
``apply_patch_call`` carries one operation (``create_file``, ``update_file`` or
``delete_file``; an ``update_file`` with ``move_to``, as the Agents SDK defines it, also
moves the file) with a V4A diff. Every operation runs through the workspace's tools:
``create_file`` is `write` (it never overwrites a file the session did not read),
``update_file`` is the internal `patch` tool (the file must have been read at its current
version; all hunks apply or none), ``delete_file`` the internal `delete_file` tool (same guard).
An operation runs only when the workspace offers the tool that grants it
(`Workspace.dialects`): ``create_file`` needs `write`, ``update_file`` `edit` or `write`,
``delete_file`` a `delete` tool or `write`; a read-only workspace runs none.
The `openai` package is not needed at runtime.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

from dsh_fs.errors import FsErrorCode

from ._calls import field
from ._images import image_of, responses_image_output
from ._v4a import V4AError, parse_create_diff, parse_update_diff
from ._vocabulary import Vocabulary

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.tools import DialectGrants, DialectOperation
    from dsh_fs.workspace import Session, Workspace

__all__ = [
    "ApplyPatchCallOutput",
    "FunctionCallOutput",
    "PatchOutcome",
    "ResponsesFunctionTool",
    "execute_openai_response",
    "openai_responses_tools",
    "run_apply_patch",
]

_PATCH_REPLACES: Final = frozenset({"write", "edit"})
"""The tools ``apply_patch`` stands in for (``read`` stays: the model reads before it patches)."""

_OPERATIONS: Final[dict[str, DialectOperation]] = {
    "create_file": "create",
    "update_file": "change",
    "delete_file": "delete",
}
"""What each ``apply_patch`` operation does, for the workspace's `DialectGrants`."""

VOCABULARY: Final = Vocabulary(
    phrases=(("edit requires reading ", "update_file requires reading "),),
    remedies={
        FsErrorCode.STALE_VERSION.value: "read the file again, then send a new patch",
        FsErrorCode.EDIT_NOT_FOUND.value: (
            "read the file, then send the hunk with its context and - lines copied exactly"
        ),
    },
)
"""Our failures in ``apply_patch``'s words."""


class ResponsesFunctionTool(TypedDict):
    """A Responses API function tool (``openai.types.responses.FunctionToolParam``)."""

    type: Literal["function"]
    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool


class ApplyPatchTool(TypedDict):
    """The built-in tool (``openai.types.responses.ApplyPatchToolParam``)."""

    type: Literal["apply_patch"]


class FunctionCallOutput(TypedDict):
    """A ``function_call_output`` input item answering one ``function_call``."""

    type: Literal["function_call_output"]
    call_id: str
    output: str | list[dict[str, Any]]
    """The text, or for an image `read` its text and an ``input_image`` (SPEC §10)."""


class ApplyPatchCallOutput(TypedDict):
    """An ``apply_patch_call_output`` input item answering one ``apply_patch_call``."""

    type: Literal["apply_patch_call_output"]
    call_id: str
    status: Literal["completed", "failed"]
    output: str


def openai_responses_tools(
    workspace: Workspace, *, apply_patch: bool = False
) -> list[ResponsesFunctionTool | ApplyPatchTool]:
    """The workspace's tools in the Responses API ``tools=`` shape.

    Args:
        workspace: Whose tools to offer.
        apply_patch: Offer the built-in ``{"type": "apply_patch"}`` instead of write and
            edit (read and the other tools stay function tools), when the workspace grants
            at least one of its operations (`Workspace.dialects`); else the function tools
            alone.
    """
    apply_patch = apply_patch and workspace.dialects.any_change()
    tools: list[ResponsesFunctionTool | ApplyPatchTool] = [
        {
            "type": "function",
            "name": s["name"],
            "description": s["description"],
            "parameters": s["parameters"],
            # Our schemas have optional parameters, which strict mode does not allow.
            "strict": False,
        }
        for s in workspace.tool_schemas()
        if not (apply_patch and s["name"] in _PATCH_REPLACES)
    ]
    if apply_patch:
        tools.append({"type": "apply_patch"})
    return tools


class PatchOutcome(TypedDict):
    """What one ``apply_patch`` operation did."""

    status: Literal["completed", "failed"]
    output: str


async def execute_openai_response(
    session: Session, output_items: Iterable[object] | None
) -> list[FunctionCallOutput | ApplyPatchCallOutput]:
    """Run a response's tool calls in order; returns the input items that answer them.

    ``function_call`` items run the named tool (``function_call_output``);
    ``apply_patch_call`` items apply their operation (``apply_patch_call_output`` with
    ``status`` ``completed`` or ``failed``). Other items (messages, reasoning) are skipped.
    Never raises for a bad call. Send the returned items as the next request's input,
    after the response's own output items (or with ``previous_response_id``).

    Args:
        session: The observation owner the calls run in.
        output_items: ``response.output`` as the ``openai`` SDK returns it, or the
            equivalent dicts.
    """
    replies: list[FunctionCallOutput | ApplyPatchCallOutput] = []
    items = list(output_items or ())
    # A run of apply_patch calls is one change set: all or none.
    together = _patch_sets(session, items)
    for position, item in enumerate(items):
        kind = field(item, "type")
        call_id = str(field(item, "call_id") or "")
        if position in together:
            outcome = await together[position]
            replies.append(
                {
                    "type": "apply_patch_call_output",
                    "call_id": call_id,
                    "status": outcome["status"],
                    "output": outcome["output"],
                }
            )
        elif kind == "function_call":
            output = await _function_call(session, item, call_id)
            replies.append({"type": "function_call_output", "call_id": call_id, "output": output})
        elif kind == "apply_patch_call":
            outcome = await run_apply_patch(session, field(item, "operation"), call_id=call_id)
            replies.append(
                {
                    "type": "apply_patch_call_output",
                    "call_id": call_id,
                    "status": outcome["status"],
                    "output": outcome["output"],
                }
            )
    return replies


_Call = tuple[str, "dict[str, Any] | V4AError", str]
"""One ``apply_patch`` call of a set: its path, its `patch_files` operation (or why its diff
is not V4A), its call id."""


class _PatchSet:
    """Consecutive ``apply_patch`` calls of one response (each: path, its `patch_files`
    operation), applied together by the internal `patch_files` tool the first time one of
    them asks."""

    def __init__(self, session: Session, calls: list[_Call]):
        self.session = session
        self.calls = calls
        self.outcomes: list[PatchOutcome] | None = None

    async def outcome(self, index: int) -> PatchOutcome:
        if self.outcomes is None:
            self.outcomes = await self._apply()
        return self.outcomes[index]

    async def _apply(self) -> list[PatchOutcome]:
        patches: list[dict[str, Any]] = []
        for number, (path, operation, _) in enumerate(self.calls, 1):
            if isinstance(operation, V4AError):
                own = _failed(f"Error: invalid diff for {path}: {operation.message}")
                return self._one_failed(number, path, own)
            patches.append(operation)
        result = await self.session.call(
            "patch_files", {"patches": patches}, call_id=self.calls[0][2] or None, internal=True
        )
        if not result.is_error and result.value is not None:
            return [{"status": "completed", "output": out} for out in result.value["outputs"]]
        failed = _SET_FAILURE.match(result.text)
        if failed is None:
            return [_failed(VOCABULARY.reword(result.text, result.code))] * len(self.calls)
        own = _failed(VOCABULARY.reword("Error: " + result.text[failed.end() :], result.code))
        return self._one_failed(int(failed["index"]), failed["path"], own)

    def _one_failed(self, position: int, culprit: str, own: PatchOutcome) -> list[PatchOutcome]:
        """Operation `position` (1-based) failed with `own`; every other one was not applied."""
        others = _failed(
            f"Error: not applied: the patch to {culprit} in the same response failed, and a "
            "response's apply_patch operations apply all or none"
        )
        count = len(self.calls)
        return [own if number == position else others for number in range(1, count + 1)]


class _Pending:
    """One call's share of a `_PatchSet` (awaitable once)."""

    def __init__(self, patch_set: _PatchSet, index: int) -> None:
        self.patch_set = patch_set
        self.index = index

    def __await__(self) -> Generator[Any, None, PatchOutcome]:
        return self.patch_set.outcome(self.index).__await__()


_SET_FAILURE = re.compile(r'^Error: edit (?P<index>\d+) of \d+ \("(?P<path>.*?)"\): ')


def _patch_sets(session: Session, items: list[object]) -> dict[int, _Pending]:
    """The positions of `items` that apply as one set: runs of two or more consecutive
    ``apply_patch_call`` items (creates, updates, moves, deletes) the workspace grants.
    Anything else runs call by call."""
    together: dict[int, _Pending] = {}
    run: list[tuple[int, _Call]] = []

    def close() -> None:
        if len(run) >= 2:
            patch_set = _PatchSet(session, [call for _, call in run])
            for index, (position, _) in enumerate(run):
                together[position] = _Pending(patch_set, index)
        run.clear()

    grants = session.workspace.dialects
    allowed = grants.allows("change")
    for position, item in enumerate(items):
        call = _set_operation(item, grants) if allowed else None
        if call is None:
            close()
        else:
            run.append((position, call))
    close()
    return together


def _set_operation(item: object, grants: DialectGrants) -> _Call | None:
    """An ``apply_patch_call`` as a `patch_files` operation: its path, the operation (or the
    diff's error) and call id; None for anything else, or for what the workspace does not
    grant, or a malformed call (which runs on its own and says why)."""
    if field(item, "type") != "apply_patch_call":
        return None
    operation = field(item, "operation")
    kind, path, diff = field(operation, "type"), field(operation, "path"), field(operation, "diff")
    if kind not in _OPERATIONS or not grants.allows(_OPERATIONS[str(kind)]):
        return None
    if not isinstance(path, str) or not path.strip():
        return None
    call_id = str(field(item, "call_id") or "")
    if kind == "delete_file":
        return path, {"file_path": path, "delete": True}, call_id
    move_to = field(operation, "move_to") if kind == "update_file" else None
    if move_to is not None:
        # A move runs through the workspace's `move` tool when alone: only where it is offered.
        if not isinstance(move_to, str) or not move_to.strip() or "move" not in grants.offered:
            return None
        if not isinstance(diff, str) or not diff.strip():
            return path, {"file_path": path, "move_to": move_to}, call_id
    if not isinstance(diff, str):
        return None
    try:
        if kind == "create_file":
            return path, {"file_path": path, "content": parse_create_diff(diff)}, call_id
        patch: dict[str, Any] = {"file_path": path, "hunks": parse_update_diff(diff)}
    except V4AError as error:
        return path, error, call_id  # the set fails on it: no other operation applies either
    if move_to is not None:
        patch["move_to"] = move_to
    return path, patch, call_id


async def _function_call(
    session: Session, item: object, call_id: str
) -> str | list[dict[str, Any]]:
    name = field(item, "name")
    if not isinstance(name, str):
        return "Error: the function call has no name"
    raw = field(item, "arguments")
    arguments: object
    if isinstance(raw, Mapping):
        arguments = raw
    elif raw is None or (isinstance(raw, str) and not raw.strip()):
        arguments = {}
    elif isinstance(raw, str):
        try:
            arguments = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            return f"Error: arguments are not valid JSON ({detail}); send a JSON object"
    else:
        return "Error: arguments must be a JSON object"
    result = await session.call(name, arguments, call_id=call_id or None)
    image = image_of(result)
    if image is not None:
        return responses_image_output(result.text, image)
    return result.text


def _failed(output: str) -> PatchOutcome:
    return {"status": "failed", "output": output}


def _from(result: ToolResult, verb: str) -> PatchOutcome:
    """``<verb> file <display path>``, or the failure in ``apply_patch``'s words."""
    if result.is_error or result.value is None:
        return _failed(VOCABULARY.reword(result.text, result.code))
    if verb == "Created" and result.value.get("operation") == "update":
        verb = "Updated"
    return {"status": "completed", "output": f"{verb} file {result.value['path']}"}


async def run_apply_patch(
    session: Session, operation: object, *, call_id: str | None = None
) -> PatchOutcome:
    """Apply one ``apply_patch`` operation in `session`; never raises for a bad operation.

    Args:
        session: The observation owner (one per conversation).
        operation: The call's ``operation`` (``{"type", "path", "diff"}``), an SDK object
            or a dict.
        call_id: The call's id, passed to the tool execution.
    """
    kind, path, diff = field(operation, "type"), field(operation, "path"), field(operation, "diff")
    if kind not in ("create_file", "update_file", "delete_file"):
        return _failed(
            f"Error: unknown operation type {kind!r}; expected create_file, update_file or "
            "delete_file"
        )
    if not isinstance(path, str) or not path.strip():
        return _failed(f"Error: the {kind} operation has no path")
    grants, operation_done = session.workspace.dialects, _OPERATIONS[str(kind)]
    if not grants.allows(operation_done):
        return _failed(f"Error: {grants.refusal(str(kind), operation_done)}")
    call = call_id or None
    if kind == "delete_file":
        result = await session.call("delete_file", {"file_path": path}, call_id=call, internal=True)
        return _from(result, "Deleted")
    move_to = field(operation, "move_to") if kind == "update_file" else None
    if move_to is not None:
        return await _update_and_move(session, path, move_to, diff, call)
    if not isinstance(diff, str):
        return _failed(f"Error: the {kind} operation has no diff")
    try:
        if kind == "create_file":
            content = parse_create_diff(diff)
        else:
            hunks = parse_update_diff(diff)
    except V4AError as error:
        return _failed(f"Error: invalid diff for {path}: {error.message}")
    if kind == "create_file":
        result = await session.call("write", {"file_path": path, "content": content}, call_id=call)
        return _from(result, "Created")
    result = await session.call(
        "patch", {"file_path": path, "hunks": hunks}, call_id=call, internal=True
    )
    return _from(result, "Updated")


async def _update_and_move(
    session: Session, path: str, move_to: object, diff: object, call: str | None
) -> PatchOutcome:
    """``update_file`` with ``move_to`` (the Agents SDK's rename): the diff's hunks, if it
    has any, applied to the file where it is (strict, all or nothing), then the `move` tool
    (same guards: a read source, never an unread destination). A failed move after the
    patch says that the patch was applied."""
    if not isinstance(move_to, str) or not move_to.strip():
        return _failed("Error: the update_file operation's move_to must be a non-empty path")
    patched = False
    if isinstance(diff, str) and diff.strip():
        try:
            hunks = parse_update_diff(diff)
        except V4AError as error:
            return _failed(f"Error: invalid diff for {path}: {error.message}")
        result = await session.call(
            "patch", {"file_path": path, "hunks": hunks}, call_id=call, internal=True
        )
        if result.is_error:
            return _from(result, "Updated")
        patched = True
    moved = await session.call(
        "move", {"source_path": path, "destination_path": move_to}, call_id=call, internal=True
    )
    if moved.is_error or moved.value is None:
        failure = VOCABULARY.reword(moved.text, moved.code)
        if patched:
            failure = f"{failure} (the diff was applied to {path}, which was not moved)"
        return _failed(failure)
    source, destination = moved.value["source"], moved.value["destination"]
    verb = "Updated and moved" if patched else "Moved"
    return {"status": "completed", "output": f"{verb} file {source} to {destination}"}
