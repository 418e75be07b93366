"""Change sets (SPEC §13): several edits over several files, all or nothing.

Two phases, both through the context's `fs` service (so the fence, the path rules and the
journal see every step as they see a single `write`):

1. *Staging* (`ChangeSet.stage`): each file is resolved, its edit-intent asked (the policy's
   version guard: the file must be observed at its current version, as `edit` requires),
   read once, and every edit applied to it in memory, in order. The first failure is the
   set's failure and nothing has been written.
2. *Publication* (`ChangeSet.publish`): file by file, each a `write_text` guarded by the
   version staging read and the bytes read there (`_guard`). A guard that fails midway (a
   concurrent writer) puts the files already published back, each guarded by the version
   its publication made, and the set fails `FS_STALE_VERSION` naming the file that changed.

The set's logic lives here, over the existing guarded primitives, rather than as a provider
primitive: a set names any number of targets, which the wrapper table's rows (a fixed
tuple of target arguments per primitive) cannot describe, and every provider already
guarantees what each step needs (an atomic, version-guarded replace).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS,
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_MOVE_INTENT,
    FS_WRITE_INTENT,
    SET_RECORDS,
    UTF8,
    Absent,
    CreateIfAbsent,
    FileSystem,
    FsCapture,
    FsDecoded,
    FsEdit,
    FsEditRequest,
    FsEncoding,
    FsFileType,
    FsInsertRequest,
    FsIntent,
    FsMoveOutcome,
    FsTarget,
    FsVersion,
    Present,
    ReplaceIfVersion,
    SetFileRecord,
    SetRecord,
    WriteGuard,
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
    version: FsVersion | None
    """The version staging read at (the session's observation, whose bytes staging proved
    the file still holds): publication replaces (or deletes, or moves) only a file still
    at it; None: no file was there (the set creates it)."""
    before: str | None
    """The text staging read; None: no file (the set creates it)."""
    after: str | None
    """The text once every edit of the file applied; None: the set deletes the file."""
    replacements: int = 0
    """How many occurrences its edits replaced."""
    encoding: FsEncoding = UTF8
    """The encoding staging read it in (SPEC §12: publication keeps it)."""
    move_to: FsTarget | None = None
    """Where the set moves the file (with the text `after`); None: it stays."""
    published: FsVersion | None = None
    """Set once the file's text is published: the version it made (guards a roll-back)."""
    moved: FsMoveOutcome | None = None
    """Set once the file is moved (renamed) to `move_to`."""
    copied: FsVersion | None = None
    """Set once its new text is created at `move_to` (a move with a patch): that version."""
    deleted: bool = False
    """Set once the file is deleted."""

    @property
    def changes(self) -> bool:
        """Whether publication has anything to do for it."""
        return self.after != self.before or self.move_to is not None


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
    _destinations: set[str] = field(default_factory=set)
    """The target keys files of the set move to."""
    _captures: dict[str, FsCapture | None] = field(default_factory=dict)
    """The journal's captures asked ahead of publication, by target key (`_capture`)."""
    _prefetched: dict[str, tuple[FsVersion, FsDecoded]] = field(default_factory=dict)
    """Files `prefetch` read, by target key: the version and the text read at it."""

    @property
    def fs(self) -> FileSystem:
        """The context's `fs` service."""
        return self.context.get(FS)

    async def stage(self, index: int, file_path: str, request: FsEdit) -> str:
        """Apply edit `index` (1-based: a literal edit, or a dialect's patch) to its file's
        staged text, staging the file first when this is the first edit naming it.

        Raises:
            SetFailure: what `edit` would have said, prefixed with the edit's position.
        """
        path = file_path
        try:
            target = await self.fs.resolve(file_path, session_cwd(self.execution))
            path = target.display_path
            staged = self._staged(target)
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
            if staged.after is None or staged.move_to is not None:
                raise messages.edit_gone(path)  # the set deletes or moves it before
            staged.after, count = apply_change(staged.after, request, path)
            _refuse_unencodable(_added(request), staged.encoding, "edit", path, "new_string")
            staged.replacements += count
        except FsError as error:
            raise SetFailure(index, self.count, path, error) from None
        if staged.target.target_key not in self.files:
            self.files[staged.target.target_key] = staged
        return staged.target.display_path

    async def prefetch(self, file_paths: Sequence[str]) -> None:
        """Read the files named by `file_paths` at once, each text with the version it was
        read at, for staging to take instead of reading them one after another (ten 100 KB
        files: ten reads' waits on threads and the disk overlap; issue 42's cost). Only a
        cache: a file it could not read (any error: absent, refused, not text) is read by
        staging, in the edits' order, which then reports what is wrong; a file that changes
        after it was read here is caught by the version guards as if it changed after
        staging. Policy and observation checks are staging's, unchanged.

        Nothing is read ahead from a provider whose reads are local (`local_reads`): a
        read from the page cache has no wait to overlap, and reads in flight together
        cost more CPU than one after another (issue 42: 1.8 ms of a 10-file set)."""
        if self.fs.capabilities.local_reads:
            return
        cwd = session_cwd(self.execution)
        limiter = anyio.CapacityLimiter(_PREFETCH_AT_ONCE)

        async def one(file_path: str) -> None:
            async with limiter:
                try:
                    target = await self.fs.resolve(file_path, cwd)
                    if target.target_key in self._prefetched:
                        return
                    info = await self.fs.stat(target)
                    if info is None or info.type is not FsFileType.FILE:
                        return
                    decoded = await self.fs.read_decoded(target)
                    again = await self.fs.stat(target)
                except FsError:
                    return
                if again is not None and again.version == info.version:
                    self._prefetched[target.target_key] = (info.version, decoded)

        async with anyio.create_task_group() as group:
            for file_path in dict.fromkeys(file_paths):
                group.start_soon(one, file_path)

    def _staged(self, target: FsTarget) -> StagedFile | None:
        """The file staged at `target`; a path an earlier operation moves a file to is
        refused (the set names each file once, where it is)."""
        if target.target_key in self._destinations:
            raise messages.edit_gone(target.display_path)
        return self.files.get(target.target_key)

    async def stage_create(self, index: int, file_path: str, content: str) -> tuple[str, bool]:
        """Operation `index`: the file at `file_path` gets `content` (a new file, or, as
        `write` allows, one the session read, replaced); its display path, and whether the
        set creates it.

        Raises:
            SetFailure: what `write` would have said, with the operation's position.
        """
        path = file_path
        try:
            target = await self.fs.resolve(file_path, session_cwd(self.execution))
            path = target.display_path
            staged = self._staged(target)
            if staged is None:
                guard = await self.context.events.waterfall(
                    FS_WRITE_INTENT, FsIntent(target=target, actor=self.execution), None
                )
                info = await self.fs.stat(target)
                if info is None:
                    staged = StagedFile(
                        target=target, first=index, version=None, before=None, after=None
                    )
                else:
                    if isinstance(guard, CreateIfAbsent):
                        raise messages.write_stale(path)
                    seen = guard.version if isinstance(guard, ReplaceIfVersion) else None
                    staged = await self._read(index, target, seen, "write")
            elif staged.move_to is not None:
                raise messages.write_stale(path)  # moved away by an earlier operation
            if staged.before is not None:
                # A file that is there keeps its codec (SPEC §12); a new one gets the rule of
                # its path, which only the provider knows: it refuses at publication.
                _refuse_unencodable(content, staged.encoding, "write", path, "content")
            staged.after = content
        except FsError as error:
            raise SetFailure(index, self.count, path, error) from None
        self.files.setdefault(staged.target.target_key, staged)
        return path, staged.before is None

    async def stage_delete(self, index: int, file_path: str) -> str:
        """Operation `index`: the file at `file_path` is deleted (it must be text the
        session observed at its current version, as `delete` requires; its text is what a
        roll-back puts back); its display path.

        Raises:
            SetFailure: what `delete` would have said, with the operation's position.
        """
        path = file_path
        try:
            target = await self.fs.resolve(file_path, session_cwd(self.execution))
            path = target.display_path
            staged = self._staged(target)
            if staged is None:
                expected = await self.context.events.waterfall(
                    FS_DELETE_INTENT, FsIntent(target=target, actor=self.execution), None
                )
                staged = await self._read(index, target, expected, "delete")
            elif staged.after is None or staged.move_to is not None:
                raise messages.not_found("delete", path)
            staged.after = None
        except FsError as error:
            raise SetFailure(index, self.count, path, error) from None
        self.files.setdefault(staged.target.target_key, staged)
        return path

    async def stage_move(self, index: int, file_path: str, move_to: str) -> tuple[str, str]:
        """Operation `index`: the file at `file_path` (as staged so far) moves to `move_to`,
        where no file may be (a set never replaces a file by a move); the display paths of
        both.

        Raises:
            SetFailure: what `move` would have said, with the operation's position.
        """
        path = file_path
        try:
            cwd = session_cwd(self.execution)
            target = await self.fs.resolve(file_path, cwd)
            path = target.display_path
            destination = await self.fs.resolve(move_to, cwd)
            staged = self._staged(target)
            if staged is None:
                expected = await self.context.events.waterfall(
                    FS_MOVE_INTENT, FsIntent(target=target, actor=self.execution), None
                )
                staged = await self._read(index, target, expected, "move")
            if staged.after is None or staged.move_to is not None:
                raise messages.not_found("move", path)
            if staged.before is None:
                raise messages.move_stale(path)  # created by this set: create it there instead
            await self.context.events.waterfall(
                FS_WRITE_INTENT, FsIntent(target=destination, actor=self.execution), None
            )
            taken = destination.target_key in self.files or destination.target_key in (
                self._destinations
            )
            if taken or await self.fs.stat(destination) is not None:
                raise messages.move_exists(path, destination.display_path)
            staged.move_to = destination
        except FsError as error:
            raise SetFailure(index, self.count, path, error) from None
        self.files.setdefault(staged.target.target_key, staged)
        self._destinations.add(destination.target_key)
        return path, destination.display_path

    async def _read(
        self,
        index: int,
        target: FsTarget,
        expected: FsVersion | None,
        verb: Literal["edit", "write", "delete", "move"] = "edit",
    ) -> StagedFile:
        """The file's current text, only at `expected` (the version the edit-intent says the
        session observed; None: any), and the version staging then guards publication with."""
        path = target.display_path
        stale = _STALE[verb]
        prefetched = self._prefetched.pop(target.target_key, None)
        if prefetched is not None:
            version, decoded = prefetched
            if expected is not None and version != expected:
                raise stale(path)
            return StagedFile(
                target=target,
                first=index,
                version=version,
                before=decoded.text,
                after=decoded.text,
                encoding=decoded.encoding,
            )
        info = await self.fs.stat(target)
        if info is None:
            raise messages.edit_gone(path) if verb == "edit" else messages.not_found(verb, path)
        if info.type is not FsFileType.FILE:
            raise messages.not_regular_file(verb, path)
        # Read only as the text the session observed at its version (the edits were made
        # against it), not as a new observation: the provider compares the bytes with what
        # it knew there as its guarded mutations do, so a change since (or during the read),
        # a same-size rewrite in the version's timestamp tick too, is stale, and a touch or
        # an identical rewrite (a version that moved, the same bytes) is not, as for `edit`.
        # That version guards the publication: any other one it finds is compared by content.
        # Read as the change it is for: a fence or a rule that would refuse the file's
        # publication refuses it now, before any file of the set is published.
        at = info.version if expected is None else expected
        read = await self.fs.read_decoded_at(target, at, change=verb)
        if read is None:
            raise stale(path)
        return StagedFile(
            target=target,
            first=index,
            version=at,
            before=read.text,
            after=read.text,
            encoding=read.encoding,
        )

    def check_size(self) -> None:
        """Refuse a set whose new content is over the bound, before anything is written.

        Raises:
            ToolArgumentError: naming the limit.
        """
        texts = [staged.after for staged in self.files.values() if staged.after is not None]
        if 4 * sum(map(len, texts)) <= self.max_bytes:
            return  # at most 4 UTF-8 bytes a character: under the bound without encoding
        total = sum(len(text.encode("utf-8")) for text in texts)
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
        changed = [staged for staged in self.files.values() if staged.changes]
        fs = self.fs
        if isinstance(fs, ApprovingFileSystem) and changed:
            # One approval for the whole set, one diff (SPEC §11.2), before any file lands.
            await fs.approve_set(
                [
                    (
                        staged.target,
                        staged.version,
                        staged.before,
                        staged.after,
                        staged.encoding,
                        staged.move_to,
                    )
                    for staged in changed
                ]
            )
        records = self.context.get(SET_RECORDS) if self.context.has(SET_RECORDS) else None
        if records is not None and changed:
            # The intent, durable before the first publication: a process killed from here
            # on leaves it for the next start to finish or roll back (`recover_sets`).
            # The journal's captures asked first: a journaled set's record copies its old
            # texts, as the journal keeps each replaced file as a hard link only while it
            # has no other name (a link of the record's would make it copy every one).
            journaled = await self._capture_ahead(changed)
            await records.begin(self.record(changed, keep=not journaled))
        try:
            # One batch: the files' directory fsyncs (one per directory, not one per file)
            # and their journal commits come at its end, before the record goes; a power
            # loss before then can only leave files old, which the record rolls back.
            async with fs.batch():
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
                path=(staged.move_to or staged.target).display_path,
                before=staged.before or "",
                after=staged.after or "",
                replacements=staged.replacements,
            )
            for staged in self.files.values()
        )

    def record(self, changed: list[StagedFile], *, keep: bool = True) -> SetRecord:
        """The set's intent record: every file it publishes, its text before and after;
        `keep`: the records may keep a replaced file itself rather than copy its text."""
        files: list[SetFileRecord] = []
        for staged in changed:
            after = None if staged.after is None else SetFileRecord.digest(staged.after)
            # The file's own path (the provider's key), where a backend may keep the file
            # it replaces instead of copying its old text (`SetFileRecord.source`).
            source = None
            if keep and staged.before is not None:
                source = str(staged.target.target_key)
            path = staged.target.display_path
            if staged.move_to is None:
                files.append(
                    SetFileRecord(path=path, before=staged.before, after=after, source=source)
                )
                continue
            # A move is, to recovery, the source deleted and the destination created.
            files.append(SetFileRecord(path=path, before=staged.before, after=None, source=source))
            files.append(SetFileRecord(path=staged.move_to.display_path, before=None, after=after))
        return SetRecord(id=self.group, files=tuple(files))

    async def _publish(self, changed: list[StagedFile]) -> None:
        """Publish `changed` in order, each at its staged version; on a failure put back
        what was published and raise."""
        for staged in changed:
            try:
                await self._publish_one(staged)
            except FsError as error:
                await self._roll_back(changed)
                verb = "edit" if staged.after is not None else "delete"
                cause = _STALE[verb](staged.target.display_path)
                if error.code is not FsErrorCode.STALE_VERSION:
                    cause = error
                self.failure = SetFailure(
                    staged.first, self.count, staged.target.display_path, cause
                )
                raise self.failure from None

    async def _publish_one(self, staged: StagedFile) -> None:
        """One file's publication: its deletion; or its text (replacing the staged version,
        or created where no file was); or its move (a rename when its text is unchanged,
        else its new text created at the destination and the source deleted: two journal
        entries of the set that each undo on their own, where a write and a move of one
        file would chain within the group)."""
        context, execution, fs, target = self.context, self.execution, self.fs, staged.target
        if staged.after is None or (staged.move_to is not None and staged.after != staged.before):
            if staged.after is not None and staged.move_to is not None:
                destination = staged.move_to
                capture = await self._capture(destination)
                written = await fs.write_text(
                    destination, staged.after, CreateIfAbsent(), capture=capture
                )
                staged.copied = written.version
                await observe(context, execution, destination, Present(written.version))
            assert staged.version is not None  # a deleted (or moved) file was read
            capture = await self._capture(target)
            await fs.delete(target, staged.version, capture=capture)
            staged.deleted = True
            await observe(context, execution, target, Absent())
            return
        if staged.move_to is None:
            guard = self._guard(staged)
            capture = await self._capture(target)
            written = await fs.write_text(target, staged.after, guard, capture=capture)
            staged.published = written.version
            await observe(context, execution, target, Present(written.version))
            return
        # A move is journaled as the move tool journals it: a change of its destination.
        destination = staged.move_to
        capture = await self._capture(destination)
        staged.moved = await fs.move(
            target, destination, staged.version, CreateIfAbsent(), capture=capture
        )
        await observe(context, execution, target, Absent())
        if staged.moved.version is not None:
            await observe(context, execution, destination, Present(staged.moved.version))

    @staticmethod
    def _guard(staged: StagedFile) -> WriteGuard:
        """The guard of a file's publication: the version staging read, with the bytes read
        there when they are the text's UTF-8 (the provider compares them, where it would
        otherwise hash the file to tell a same-tick rewrite or a touch); none: a create."""
        if staged.version is None:
            return CreateIfAbsent()
        if staged.before is None or not staged.encoding.utf8:
            return ReplaceIfVersion(staged.version)
        return ReplaceIfVersion(staged.version, staged.before.encode("utf-8"))

    async def _capture(self, target: FsTarget) -> FsCapture | None:
        """The journal's capture of the set's change of `target` (asked ahead, or now)."""
        key = str(target.target_key)
        if key in self._captures:
            capture = self._captures.pop(key)
        else:
            capture = await capture_for(self.context, self.execution, target, group=self.group)
        self.journaled = self.journaled or capture is not None
        return capture

    async def _capture_ahead(self, changed: list[StagedFile]) -> bool:
        """Ask for the capture of every change `_publish_one` will make (each target's,
        taken there); whether any is journaled."""
        for staged in changed:
            targets: list[FsTarget] = []
            if staged.after is None or (
                staged.move_to is not None and staged.after != staged.before
            ):
                if staged.after is not None and staged.move_to is not None:
                    targets.append(staged.move_to)
                targets.append(staged.target)
            else:
                targets.append(staged.move_to or staged.target)
            for target in targets:
                self._captures[str(target.target_key)] = await capture_for(
                    self.context, self.execution, target, group=self.group
                )
        return any(capture is not None for capture in self._captures.values())

    async def _roll_back(self, changed: list[StagedFile]) -> None:
        """Put back every published file, newest first, each step only at the version its
        publication made (a file someone changed since is left as they made it). Each step
        is journaled as a change of its own (no group): undoing the set then finds its
        files not as it left them, and refuses, all of them."""
        for staged in reversed(changed):
            for step in (self._restore_deleted, self._remove_copy, self._move_back):
                try:
                    await step(staged)
                except FsError:
                    # Someone changed the file too: their change stands, and the session's
                    # observation of it is dropped by the stale guard next time.
                    continue
            try:
                await self._restore_text(staged)
            except FsError:
                continue

    async def _restore_deleted(self, staged: StagedFile) -> None:
        if not staged.deleted:
            return
        assert staged.before is not None
        context, execution, target = self.context, self.execution, staged.target
        capture = await capture_for(context, execution, target)
        restored = await self.fs.write_text(
            target, staged.before, CreateIfAbsent(), capture=capture
        )
        staged.deleted = False
        await observe(context, execution, target, Present(restored.version))

    async def _remove_copy(self, staged: StagedFile) -> None:
        if staged.copied is None or staged.move_to is None:
            return
        context, execution, destination = self.context, self.execution, staged.move_to
        capture = await capture_for(context, execution, destination)
        await self.fs.delete(destination, staged.copied, capture=capture)
        staged.copied = None
        await observe(context, execution, destination, Absent())

    async def _move_back(self, staged: StagedFile) -> None:
        if staged.moved is None or staged.move_to is None:
            return
        context, execution, target = self.context, self.execution, staged.target
        moved = staged.moved.version
        if moved is None:
            info = await self.fs.stat(staged.move_to)
            if info is None:
                raise messages.move_stale(staged.move_to.display_path)
            moved = info.version
        capture = await capture_for(context, execution, target)  # the move's destination
        back = await self.fs.move(staged.move_to, target, moved, CreateIfAbsent(), capture=capture)
        staged.moved = None
        await observe(context, execution, staged.move_to, Absent())
        if back.version is not None:
            await observe(context, execution, target, Present(back.version))

    async def _restore_text(self, staged: StagedFile) -> None:
        if staged.published is None:
            return
        context, execution, target = self.context, self.execution, staged.target
        capture = await capture_for(context, execution, target)
        if staged.before is None:
            await self.fs.delete(target, staged.published, capture=capture)
            await observe(context, execution, target, Absent())
        else:
            restored = await self.fs.write_text(
                target, staged.before, ReplaceIfVersion(staged.published), capture=capture
            )
            # The restored text is the text the session read: observed as it is now.
            await observe(context, execution, target, Present(restored.version))
        staged.published = None


def _added(change: FsEdit) -> str:
    """The text `change` puts into the file: a literal edit's new_string, an insert's text,
    a patch's added lines (its context lines are the file's own, which its codec holds)."""
    if isinstance(change, FsEditRequest):
        return change.new_string
    if isinstance(change, FsInsertRequest):
        return change.text
    return "\n".join(text for hunk in change.hunks for op, text in hunk.lines if op == "+")


def _refuse_unencodable(
    text: str, encoding: FsEncoding, verb: Literal["edit", "write"], path: str, where: str
) -> None:
    """Refuse `text` that the file's codec cannot hold, while staging, as the provider
    refuses it when it encodes a single `edit` or `write` (`providers._text.encode_as`,
    which a tool cannot import): publication would fail after other files of the set were
    published, and SPEC §13 checks every edit before anything is written.

    Raises:
        FsError: `FS_NOT_TEXT` for a lone surrogate in a UTF-8 file (UTF-8 has no form for
            it); `FS_NOT_ENCODABLE` naming the first character another codec cannot encode.
    """
    if encoding.utf8 and text.isascii():
        return
    try:
        text.encode(encoding.codec)
    except UnicodeEncodeError as exc:
        if encoding.utf8:
            raise messages.invalid_utf8(verb, path) from None
        char = exc.object[exc.start]
        raise messages.not_encodable(verb, path, encoding.codec, char, where) from None


_PREFETCH_AT_ONCE: Final = 8
"""How many files `prefetch` reads at a time."""

_STALE: Final = {
    "edit": messages.edit_stale,
    "write": messages.write_stale,
    "delete": messages.delete_stale,
    "move": messages.move_stale,
}
"""Each verb's refusal of a file that changed since it was read."""
