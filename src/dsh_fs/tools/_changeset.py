"""Change sets (SPEC §13): several edits over several files, all or nothing.

Two phases, both through the context's `fs` service (so the fence, the path rules and the
journal see every step as they see a single `write`):

1. *Staging* (`ChangeSet.stage`): each file is resolved, its edit-intent asked (the policy's
   version guard: the file must be observed at its current version, as `edit` requires),
   read once, and every edit applied to it in memory, in order. The first failure is the
   set's failure and nothing has been written.
2. *Publication* (`ChangeSet.publish`): file by file, each a `write_text` guarded by the
   version staging read. A guard that fails midway (a concurrent writer) puts the files
   already published back, each guarded by the version its publication made, and the set
   fails `FS_STALE_VERSION` naming the file that changed.

The set's logic lives here, over the existing guarded primitives, rather than as a provider
primitive: a set names any number of targets, which the wrapper table's rows (a fixed
tuple of target arguments per primitive) cannot describe, and every provider already
guarantees what each step needs (an atomic, version-guarded replace).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Final

import anyio

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS,
    FS_EDIT_INTENT,
    SET_RECORDS,
    UTF8,
    FileSystem,
    FsEdit,
    FsEncoding,
    FsFileType,
    FsIntent,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    Present,
    ReplaceIfVersion,
    SetFileRecord,
    SetRecord,
    apply_change,
    messages,
)
from dsh_fs.runtime import Context, ToolArgumentError, ToolExecution

from ._approval import ApprovingFileSystem
from ._base import capture_for, observe, session_cwd
from ._placeholders import change_texts, refuse_placeholder
from ._values import EditedFile

__all__ = ["MAX_SET_BYTES", "ChangeSet", "SetFailure", "StagedFile"]

MAX_SET_BYTES: Final = 64 * 1024 * 1024
"""The default bound on a set's new content: the UTF-8 bytes of every file it would write
(64 MiB); a set over it is refused (`INVALID_ARGS`) before anything is written."""


class SetFailure(FsError):
    """One edit of a set failed: `error`'s code, details and path, its message prefixed
    with ``edit <i> of <n> ("<p>"): `` (SPEC §13)."""

    def __init__(self, index: int, count: int, path: str, error: FsError) -> None:
        super().__init__(
            error.code,
            f'edit {index} of {count} ("{path}"): {error.message}',
            path=error.path if error.path is not None else path,
            details=error.details,
        )
        self.cause = error
        """The error the edit alone would have given."""


@dataclass(slots=True, kw_only=True)
class StagedFile:
    """One file of a set while it is staged and published (mutable: the set's own state)."""

    target: FsTarget
    """The resolved file."""
    first: int
    """The 1-based index of the first edit naming it (the position a failure names)."""
    version: FsVersion
    """The version staging read: publication replaces only this one."""
    before: str
    """The text staging read."""
    after: str
    """The text once every edit of the file applied."""
    replacements: int = 0
    """How many occurrences its edits replaced."""
    encoding: FsEncoding = UTF8
    """The encoding staging read it in (SPEC §12: publication keeps it)."""
    published: FsWriteOutcome | None = None
    """Set once the file is published (its new version guards a roll-back)."""


@dataclass(slots=True)
class ChangeSet:
    """The files a set changes, staged in the order the edits first name them."""

    context: Context
    """The runtime context (its `FS` service, the intents, the journal's capture)."""
    execution: ToolExecution
    """The call the set belongs to (its session: the cwd, the observations)."""
    count: int
    """How many edits the set has (the ``<n>`` of a failure)."""
    placeholders: bool = True
    """Refuse new text that stands for lines it deletes (SPEC §8.3), as `edit` does."""
    max_bytes: int = MAX_SET_BYTES
    """The bound on the UTF-8 bytes of every file the set would write."""
    files: dict[str, StagedFile] = field(default_factory=dict)
    """The staged files by target key, in the order first named."""
    group: str = field(default_factory=lambda: f"set-{secrets.token_hex(8)}")
    """The set's id: each file's journal entry carries it (`dsh-fs undo ROOT GROUP_ID`)."""
    journaled: bool = False
    """Whether the journal captured the set's publication (then `group` names entries)."""
    failure: SetFailure | None = None
    """Why publication stopped (the files published before were put back)."""

    @property
    def fs(self) -> FileSystem:
        """The context's `fs` service."""
        return self.context.get(FS)

    async def stage(self, index: int, file_path: str, request: FsEdit) -> None:
        """Apply edit `index` (1-based: a literal edit, or a dialect's patch) to its file's
        staged text, staging the file first when this is the first edit naming it.

        Raises:
            SetFailure: what `edit` would have said, prefixed with the edit's position.
        """
        path = file_path
        try:
            target = await self.fs.resolve(file_path, session_cwd(self.execution))
            path = target.display_path
            staged = self.files.get(target.target_key)
            expected: FsVersion | None = None
            if staged is None:
                expected = await self.context.events.waterfall(
                    FS_EDIT_INTENT, FsIntent(target=target, actor=self.execution), None
                )
            texts = change_texts(request) if self.placeholders else None
            if texts is not None:
                refuse_placeholder("edit", path, *texts)
            if staged is None:
                staged = await self._read(index, target, expected)
            staged.after, count = apply_change(staged.after, request, path)
            staged.replacements += count
        except FsError as error:
            raise SetFailure(index, self.count, path, error) from None
        if staged.target.target_key not in self.files:
            self.files[staged.target.target_key] = staged

    async def _read(self, index: int, target: FsTarget, expected: FsVersion | None) -> StagedFile:
        """The file's current text, only at `expected` (the version the edit-intent says the
        session observed; None: any), and the version staging then guards publication with."""
        path = target.display_path
        info = await self.fs.stat(target)
        if info is None:
            raise messages.edit_gone(path)
        if info.type is not FsFileType.FILE:
            raise messages.not_regular_file("edit", path)
        if expected is not None and info.version != expected:
            raise messages.edit_stale(path)
        decoded = await self.fs.read_decoded(target)
        # The read is not atomic with the stat: a second stat tells whether the text read is
        # the version stat saw (else a concurrent writer got in between: stale, as `edit`).
        again = await self.fs.stat(target)
        if again is None or again.version != info.version:
            raise messages.edit_stale(path)
        return StagedFile(
            target=target,
            first=index,
            version=info.version,
            before=decoded.text,
            after=decoded.text,
            encoding=decoded.encoding,
        )

    def check_size(self) -> None:
        """Refuse a set whose new content is over the bound, before anything is written.

        Raises:
            ToolArgumentError: naming the limit.
        """
        total = sum(len(staged.after.encode("utf-8")) for staged in self.files.values())
        if total > self.max_bytes:
            raise ToolArgumentError(
                f"the files edit_files would write total {total} bytes, over the limit of "
                f"{self.max_bytes} bytes"
            )

    async def publish(self) -> tuple[EditedFile, ...]:
        """Write every staged file, each only at the version staging read; all or nothing.

        Raises:
            SetFailure: `FS_STALE_VERSION` naming the file that changed since staging (the
                files already published are put back first), or the write's own error.
        """
        changed = [staged for staged in self.files.values() if staged.after != staged.before]
        fs = self.fs
        if isinstance(fs, ApprovingFileSystem) and changed:
            # One approval for the whole set, one diff (SPEC §11.2), before any file lands.
            await fs.approve_set(
                [
                    (staged.target, staged.version, staged.before, staged.after, staged.encoding)
                    for staged in changed
                ]
            )
        records = self.context.get(SET_RECORDS) if self.context.has(SET_RECORDS) else None
        if records is not None and changed:
            # The intent, durable before the first publication: a process killed from here
            # on leaves it for the next start to finish or roll back (`recover_sets`).
            await records.begin(self.record(changed))
        try:
            await self._publish(changed)
        except SetFailure:
            pass  # put back already (as far as a third party's change allows): whole
        except BaseException:
            # Cancelled (or worse) mid-publication: the set is put back before the call
            # ends, so no process is left to find it half published.
            with anyio.CancelScope(shield=True):
                await self._roll_back(changed)
                if records is not None and changed:
                    await records.end(self.group)
            raise
        if records is not None and changed:
            # Whole now (all new, or put back): the intent goes, durably, before the call
            # answers (a record still there would make the next start judge files changed
            # since). Shielded: a cancellation here must not strand it.
            with anyio.CancelScope(shield=True):
                await records.end(self.group)
        if self.failure is not None:
            raise self.failure
        return tuple(
            EditedFile(
                path=staged.target.display_path,
                before=staged.before,
                after=staged.after,
                replacements=staged.replacements,
            )
            for staged in self.files.values()
        )

    def record(self, changed: list[StagedFile]) -> SetRecord:
        """The set's intent record: every file it publishes, its text before and after."""
        return SetRecord(
            id=self.group,
            files=tuple(
                SetFileRecord(
                    path=staged.target.display_path,
                    before=staged.before,
                    after=SetFileRecord.digest(staged.after),
                )
                for staged in changed
            ),
        )

    async def _publish(self, changed: list[StagedFile]) -> None:
        """Publish `changed` in order, each at its staged version; on a failure put back
        what was published and raise."""
        for staged in changed:
            try:
                capture = await capture_for(
                    self.context, self.execution, staged.target, group=self.group
                )
                self.journaled = self.journaled or capture is not None
                staged.published = await self.fs.write_text(
                    staged.target, staged.after, ReplaceIfVersion(staged.version), capture=capture
                )
            except FsError as error:
                await self._roll_back(changed)
                cause = messages.edit_stale(staged.target.display_path)
                if error.code is not FsErrorCode.STALE_VERSION:
                    cause = error
                self.failure = SetFailure(
                    staged.first, self.count, staged.target.display_path, cause
                )
                raise self.failure from None
            await observe(
                self.context, self.execution, staged.target, Present(staged.published.version)
            )

    async def _roll_back(self, changed: list[StagedFile]) -> None:
        """Put back every published file, newest first, each only at the version its
        publication made (a file someone changed since is left as they made it)."""
        for staged in reversed(changed):
            published = staged.published
            if published is None:
                continue
            try:
                # The roll-back is journaled as a change of its own (no group): undoing the
                # set then finds its files not as it left them, and refuses, all of them.
                capture = await capture_for(self.context, self.execution, staged.target)
                restored = await self.fs.write_text(
                    staged.target,
                    staged.before,
                    ReplaceIfVersion(published.version),
                    capture=capture,
                )
            except FsError:
                # Someone changed the published file too: their change stands, and the
                # session's observation of it is dropped by the stale guard next time.
                continue
            # The restored text is the text the session read: it is observed as it is now.
            await observe(self.context, self.execution, staged.target, Present(restored.version))
            staged.published = None
