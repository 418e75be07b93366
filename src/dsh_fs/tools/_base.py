"""`FsTool`: what the file tools share (schema from the declared parameters, remedies)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from copy import deepcopy
from typing import Any, ClassVar, Generic, TypeVar

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    FS,
    FS_CHANGE_INTENT,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_SETTLE,
    FsCapture,
    FsEdit,
    FsEditOutcome,
    FsIntent,
    FsObserved,
    FsSettle,
    FsTarget,
    Observation,
    Present,
)
from dsh_fs.runtime import Context, Tool, ToolExecution

from ._arguments import Param, check_shape, object_schema
from ._placeholders import change_texts, refuse_placeholder
from ._render import message_with_remedy

__all__ = ["FsTool", "capture_for", "guarded_edit", "observe", "session_cwd"]

A = TypeVar("A")
V = TypeVar("V")


class FsTool(Tool[A, V], Generic[A, V]):
    """A file tool whose arguments are declared by `params`."""

    params: ClassVar[tuple[Param, ...]]
    """The parameters: the shape check's JSON types (upstream's), and the JSON Schema of
    each, which together are the tool's `parameters`."""

    def __init__(self) -> None:
        self._schema = object_schema(self.params)

    def parameters_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema (a fresh copy: callers may change it)."""
        return deepcopy(self._schema)

    def parse_arguments(self, raw: Mapping[str, Any]) -> A:
        """Check the shape, then the values, with upstream's messages (see `_arguments`).

        Raises:
            ToolArgumentError: the arguments do not fit the schema or the value rules.
        """
        check_shape(raw, self.params)
        return self.parse_values(raw)

    @abstractmethod
    def parse_values(self, raw: Mapping[str, Any]) -> A:
        """The arguments, once their shape is right: apply the value rules and defaults.

        Raises:
            ToolArgumentError: the first value rule broken.
        """

    def error_message(self, error: FsError) -> str:
        """The provider's or the policy's message, plus the remedy its code calls for."""
        return message_with_remedy(error)


def session_cwd(execution: ToolExecution) -> str | None:
    """The working directory relative paths resolve against (None: the provider's base)."""
    return None if execution.session is None else execution.session.cwd


async def observe(
    context: Context, execution: ToolExecution, target: FsTarget, observation: Observation
) -> None:
    """Dispatch `fs/observed`: `execution` saw `target` in the state `observation`; then
    `fs/settle`, so a shared ledger holds it before the result goes out (SPEC §14). Without
    a listener (no observation policy) neither payload is built."""
    events = context.events
    if events.listened(FS_OBSERVED):
        events.emit(
            FS_OBSERVED, FsObserved(target=target, observation=observation, actor=execution)
        )
    if events.listened(FS_SETTLE):
        await events.waterfall(FS_SETTLE, FsSettle(actor=execution), None)


async def guarded_edit(
    context: Context,
    execution: ToolExecution,
    file_path: str,
    change: FsEdit,
    *,
    placeholders: bool = True,
) -> tuple[FsTarget, FsEditOutcome]:
    """Resolve `file_path`, ask the edit-intent for the version guard, apply `change` in the
    provider's critical section, and record the new version (`edit` and the dialects'
    internal changes share this). With `placeholders`, a change whose new text stands for
    lines it deletes is refused first (SPEC §8.3; the change itself holds both texts).

    Raises:
        FsError: the edit-intent's refusals (`FS_NOT_OBSERVED`, `FS_NOT_FOUND`),
            `FS_PLACEHOLDER`, `FS_STALE_VERSION`, the change's own (`FS_EDIT_NOT_FOUND`,
            …), and the provider's errors.
    """
    fs = context.get(FS)
    target = await fs.resolve(file_path, session_cwd(execution))
    expected = await context.events.waterfall(
        FS_EDIT_INTENT, FsIntent(target=target, actor=execution), None
    )
    texts = change_texts(change) if placeholders else None
    if texts is not None:
        refuse_placeholder("edit", target.display_path, *texts)
    capture = await capture_for(context, execution, target)
    outcome = await fs.edit_text(target, change, expected, capture=capture)
    await observe(context, execution, target, Present(outcome.version))
    return target, outcome


async def capture_for(
    context: Context, execution: ToolExecution, target: FsTarget, *, group: str | None = None
) -> FsCapture | None:
    """The journal's capture of the mutation `execution` is about to make of `target`
    (`fs/change-intent`; `group`: the change set it belongs to, SPEC §13); None when nothing
    journals. Pass it to the provider only when it is not None (a provider without
    journaling need not take the keyword)."""
    return await context.events.waterfall(
        FS_CHANGE_INTENT, FsIntent(target=target, actor=execution, group=group), None
    )
