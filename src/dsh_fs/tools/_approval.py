"""Approvals pinned to the approved bytes (SPEC §11.2).

The seam is one per-call provider view, `ApprovingFileSystem`: `dsh_fs.workspace.Session`
puts it in front of the session's `fs` for each call when approvals are on, so every
mutation of every tool (the six file tools, `edit_files`, the dialects' internal tools)
passes through the same four steps, and undo and the review page (which change files
through the journal, never through a session's call) are never held:

1. *The proposal*, computed in full before anyone is asked: the base version (the caller's
   observation: the guard the policy gave the tool), the exact new content and its digest,
   the unified diff. An edit is applied in memory to the text read at the base version, so
   what is shown is what will be written. Nothing is published, nothing is staged on disk:
   a call cancelled while it waits leaves nothing behind.
2. *The question*: the session's approver (the library callback, the MCP client by
   elicitation, the review page), bounded by the timeout.
3. *The pin*: after an approval the content is published by a compare-and-swap on the base
   version (`ReplaceIfVersion`, or `CreateIfAbsent` for a file that did not exist), so it
   lands only if the file is still as it was shown, and the bytes are the proposal's.
4. *The record*: the journal's capture carries who approved and the note.

A view is made per call (it knows the tool and the session, which a provider shared by all
sessions cannot) and never closes the provider it fronts.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, cast

import anyio

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS,
    Absent,
    CreateIfAbsent,
    FileSystem,
    FsCapture,
    FsDecoded,
    FsDeleteOutcome,
    FsEdit,
    FsEditOutcome,
    FsEncoding,
    FsFileType,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    PathRules,
    Present,
    ReplaceIfVersion,
    WrapperFileSystem,
    WriteGuard,
    apply_change,
    messages,
)
from dsh_fs.runtime import Context, ToolExecution, ToolResult

from ._base import capture_for, observe
from ._render import message_with_remedy

__all__ = [
    "DEFAULT_APPROVE_TIMEOUT",
    "DIFF_LIMIT",
    "Approval",
    "ApprovalGate",
    "ApproveMode",
    "Approver",
    "ApprovingFileSystem",
    "Proposal",
    "ProposedChange",
    "apply_proposal",
    "digest_of",
    "workspace_id",
]

ApproveMode: TypeAlias = Literal["none", "destructive", "changes"]
"""Which changes need a person's approval: none, the destructive ones (delete, move, a write
over an existing file, any change to a listed path), or every change."""

DEFAULT_APPROVE_TIMEOUT: Final = 600.0
"""How long a call waits for an answer by default (seconds)."""

DIFF_LIMIT: Final = 4 * 1024 * 1024
"""The most characters of old plus new text a proposal diffs; past it the diff says how
large the change is instead (the digest still pins the bytes)."""

Action: TypeAlias = Literal["write", "delete", "move", "mkdir", "delete_dir", "delete_link"]
"""What a proposed change publishes: content (a write, an edit, a patch: the whole new
content), a file's removal, a move, a new directory, an empty directory's or a link's
removal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    """A person's answer to a `Proposal`."""

    approved: bool
    """Whether the change may land."""
    note: str | None = None
    """What the person said (a rejection's note reaches the model)."""
    by: str | None = None
    """Who answered, as the journal records it (`approved_by`); None: ``callback``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProposedChange:
    """One file-system change of a proposal, with everything its publication is pinned to."""

    action: Action
    """What it publishes."""
    verb: messages.Verb
    """The operation as messages name it (``write``, ``edit``, ``delete``, ``move``, …)."""
    path: str
    """The display path it changes (a move's destination)."""
    source: str | None = None
    """A move's source; None otherwise."""
    base: FsVersion | None = None
    """The version the change is based on (the caller's observation; a move's source);
    None: the path held no file (a create, a directory)."""
    content: str | None = None
    """The exact new content of a `write`; None for the other actions."""
    digest: str | None = None
    """The sha256 (hex) of the bytes `content` is published as: in the codec and with the
    BOM of the file it replaces (SPEC §12), UTF-8 for a new file; None without content."""
    encoding: str | None = None
    """The codec of the file a write replaces when it is not UTF-8 (``cp1252``,
    ``utf-16-le``…, SPEC §12); None: UTF-8, or a new file."""

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "action": self.action,
            "verb": self.verb,
            "path": self.path,
            "source": self.source,
            "base": self.base,
            "content": self.content,
            "digest": self.digest,
        } | ({} if self.encoding is None else {"encoding": self.encoding})

    @classmethod
    def from_data(cls, data: Any) -> ProposedChange:
        """The change `to_data` made.

        Raises:
            ValueError: not a change's data.
        """
        if not isinstance(data, dict):
            raise ValueError("a proposed change must be an object")
        action, verb = data.get("action"), data.get("verb")
        if action not in _ACTIONS or verb not in _VERBS:
            raise ValueError("a proposed change has an unknown action")
        return cls(
            action=action,
            verb=verb,
            path=_text(data, "path"),
            source=_optional(data, "source"),
            base=FsVersion(b) if (b := _optional(data, "base")) is not None else None,
            content=_optional(data, "content"),
            digest=_optional(data, "digest"),
            encoding=_optional(data, "encoding"),
        )


_ACTIONS: Final = ("write", "delete", "move", "mkdir", "delete_dir", "delete_link")
_VERBS: Final = ("write", "edit", "delete", "move", "mkdir")


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """A change computed in full and not published, waiting for a person (SPEC §11.2).

    JSON-serialisable (`to_json`, `from_json`), so a framework can hold it across a pause
    and publish it later with `dsh_fs.workspace.Session.apply`, under the same pin.
    """

    id: str
    """Unique; an approval publishes a proposal once."""
    workspace: str
    """The workspace it was computed in (a digest of its roots): another refuses it."""
    tool: str
    """The tool whose call proposed it."""
    session: str
    """The session that called it."""
    changes: tuple[ProposedChange, ...]
    """What lands, in order (one for every tool but `edit_files`, which proposes its set)."""
    diff: str
    """The unified diff of every change (what the person reads)."""

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths it changes, in order."""
        return tuple(change.path for change in self.changes)

    def to_json(self) -> str:
        """The proposal as JSON text."""
        return json.dumps(
            {
                "id": self.id,
                "workspace": self.workspace,
                "tool": self.tool,
                "session": self.session,
                "changes": [change.to_data() for change in self.changes],
                "diff": self.diff,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Proposal:
        """The proposal `to_json` wrote. Nothing is trusted here: `Session.apply` checks the
        workspace, the fence and every digest before it publishes.

        Raises:
            ValueError: not a proposal's JSON.
        """
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a proposal must be a JSON object")
        changes = data.get("changes")
        if not isinstance(changes, list) or not changes:
            raise ValueError("a proposal must hold at least one change")
        return cls(
            id=_text(data, "id"),
            workspace=_text(data, "workspace"),
            tool=_text(data, "tool"),
            session=_text(data, "session"),
            changes=tuple(ProposedChange.from_data(item) for item in changes),
            diff=_text(data, "diff"),
        )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def _optional(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string or null")
    return value


Approver: TypeAlias = Callable[[Proposal], "Approval | Awaitable[Approval | None] | None"]
"""Asked about each proposal; sync or async. None means no answer now (the call fails
`FS_NOT_APPROVED`; the approver may keep the proposal and `Session.apply` it later)."""


def digest_of(content: str, encoding: FsEncoding | None = None) -> str:
    """The sha256 (hex) of the bytes `content` is published as over a file in `encoding`
    (its codec, and its BOM when `content` has none: a write keeps both, SPEC §12); None:
    UTF-8, as a new file.

    Raises:
        UnicodeEncodeError: the codec cannot encode a character of `content`.
    """
    return hashlib.sha256(_published_bytes(content, encoding)).hexdigest()


def _published_bytes(content: str, encoding: FsEncoding | None) -> bytes:
    if encoding is None:
        return content.encode("utf-8", "surrogatepass")
    if encoding.bom and not content.startswith("\ufeff"):
        content = "\ufeff" + content
    if encoding.utf8:
        return content.encode("utf-8", "surrogatepass")
    return content.encode(encoding.codec)


def _pinned_digest(
    content: str, encoding: FsEncoding, verb: Literal["edit", "write"], path: str, where: str
) -> str:
    """`digest_of` for a proposal: a character the file's codec cannot encode is refused
    before anyone is asked, as the tool refuses it (`FS_NOT_ENCODABLE`)."""
    try:
        return digest_of(content, encoding)
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start]
        raise messages.not_encodable(verb, path, encoding.codec, char, where) from None


def _codec_name(encoding: FsEncoding) -> str | None:
    return None if encoding.utf8 else encoding.codec


def workspace_id(roots: Sequence[str]) -> str:
    """The id of the workspace serving `roots` (stable across processes: a proposal held
    overnight is still this workspace's)."""
    return hashlib.sha256("\0".join(roots).encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(slots=True, kw_only=True)
class ApprovalGate:
    """A workspace's approval settings and the approvals already used (mutable state)."""

    mode: ApproveMode = "none"
    """Which changes need an approval (a listed path always does)."""
    paths: PathRules | None = None
    """The `--approve-path` patterns, compiled against the roots (None: none listed)."""
    approver: Approver | None = None
    """Who is asked when the session has no approver of its own (the library callback)."""
    timeout: float = DEFAULT_APPROVE_TIMEOUT
    """How long a call waits for an answer, in seconds."""
    workspace: str = ""
    """The workspace's id (`workspace_id`)."""
    used: set[str] = field(default_factory=set)
    """The ids of the proposals already published: an approval is single-use."""

    @property
    def active(self) -> bool:
        """Whether any change may need an approval."""
        return self.mode != "none" or self.paths is not None

    def required(self, action: Action, paths: Sequence[str], *, overwrites: bool) -> bool:
        """Whether a change of `action` to `paths` needs an approval (`overwrites`: a write
        that replaces an existing file)."""
        if self.mode == "changes":
            return True
        if self.paths is not None and self.paths.match(paths) is not None:
            return True
        if self.mode == "destructive":
            return action in ("delete", "move", "delete_dir", "delete_link") or overwrites
        return False

    async def decide(self, proposal: Proposal, approver: Approver | None) -> Approval:
        """Ask `approver` (else the gate's) about `proposal`, at most `timeout` seconds.

        Raises:
            FsError: `FS_REJECTED` (with the note), or `FS_NOT_APPROVED` when nobody is there
                to ask, nobody answered in time, or the answer is not an `Approval`.
        """
        first = proposal.changes[0]
        ask = approver if approver is not None else self.approver
        if ask is None:
            raise messages.not_approved(first.verb, first.path)
        answer: object = None
        with anyio.move_on_after(self.timeout):
            answer = ask(proposal)
            if inspect.isawaitable(answer):
                answer = await cast("Awaitable[object]", answer)
        if not isinstance(answer, Approval):
            raise messages.not_approved(first.verb, first.path)
        if not answer.approved:
            raise messages.rejected(first.path, answer.note)
        return answer


async def current_text(
    fs: FileSystem, target: FsTarget, verb: messages.Verb
) -> tuple[str, FsVersion]:
    """The file's text and the version it is the text of (see `current_decoded`).

    Raises:
        FsError: as `current_decoded`.
    """
    decoded, version = await current_decoded(fs, target, verb)
    return decoded.text, version


async def current_decoded(
    fs: FileSystem, target: FsTarget, verb: messages.Verb
) -> tuple[FsDecoded, FsVersion]:
    """The file's text in its encoding (SPEC §12: a BOM, a rule, a fallback) and the version
    it is the text of (a second `stat` proves that no writer got in between, as change sets
    stage).

    Raises:
        FsError: the file is missing, not a regular file, not text, or kept changing
            (`FS_STALE_VERSION` as the verb's stale message).
    """
    info = await fs.stat(target)
    if info is None:
        raise messages.not_found(verb, target.display_path)
    if info.type is not FsFileType.FILE:
        raise messages.not_regular_file(verb, target.display_path)
    decoded = await fs.read_decoded(target)
    again = await fs.stat(target)
    if again is None or again.version != info.version:
        raise _stale(verb, target.display_path)
    return decoded, info.version


async def _text_or_none(fs: FileSystem, target: FsTarget) -> tuple[FsDecoded, FsVersion] | None:
    """`current_decoded` for a write's proposal; None for a file that is not text.

    Raises:
        FsError: as `current_decoded`, but for a file that is not text.
    """
    try:
        return await current_decoded(fs, target, "write")
    except FsError as error:
        if error.code is FsErrorCode.NOT_TEXT:
            return None
        raise


def _stale(verb: messages.Verb, path: str) -> FsError:
    if verb == "edit":
        return messages.edit_stale(path)
    if verb == "delete":
        return messages.delete_stale(path)
    if verb == "move":
        return messages.move_stale(path)
    return messages.write_stale(path)


def unified_diff(path: str, before: str | None, after: str | None) -> str:
    """The unified diff of one file (``/dev/null`` for a side that does not exist); a
    summary line past `DIFF_LIMIT`."""
    old, new = before or "", after or ""
    if len(old) + len(new) > DIFF_LIMIT:
        return (
            f"--- a{_slashed(path)}\n+++ b{_slashed(path)}\n"
            f"(a large change: {len(old)} characters before, {len(new)} after)\n"
        )
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile="/dev/null" if before is None else f"a{_slashed(path)}",
        tofile="/dev/null" if after is None else f"b{_slashed(path)}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """`text` cut after each ``\\n``, line ends kept: the lines `read` numbers and the
    journal's diff shows (`str.splitlines` also cuts at ``\\r``, a form feed, ``\\x1c``,
    ``\\u2028`` and more, showing one line as several, each "without a newline")."""
    pieces = text.split("\n")
    found = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        found.append(pieces[-1])
    return found


def _slashed(path: str) -> str:
    return path if path.startswith("/") else "/" + path


class ApprovingFileSystem(WrapperFileSystem):
    """The per-call view that holds each mutation for an approval (see the module).

    Args:
        wrapped: The session's `fs` service.
        gate: The workspace's settings.
        tool: The tool of the call.
        session: The session's label.
        approver: The session's own approver (an MCP client's elicitation), else None.
    """

    def __init__(
        self,
        wrapped: FileSystem,
        gate: ApprovalGate,
        *,
        tool: str,
        session: str,
        approver: Approver | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.gate = gate
        self.tool = tool
        self.session = session
        self.approver = approver
        self._granted: dict[tuple[str, str], Approval] = {}
        """Writes an approved set allows without asking again: (target key, digest)."""

    async def aclose(self) -> None:
        """Nothing: the view does not own the provider it fronts."""

    # -- proposing and asking ----------------------------------------------------------------

    def _proposal(self, changes: tuple[ProposedChange, ...], diff: str) -> Proposal:
        return Proposal(
            id=secrets.token_hex(12),
            workspace=self.gate.workspace,
            tool=self.tool,
            session=self.session,
            changes=changes,
            diff=diff,
        )

    async def _ask(self, changes: tuple[ProposedChange, ...], diff: str) -> Approval:
        proposal = self._proposal(changes, diff)
        approval = await self.gate.decide(proposal, self.approver)
        self.gate.used.add(proposal.id)
        return approval

    async def approve_set(self, files: Sequence[SetFile]) -> None:
        """Ask once for a whole change set (SPEC §13: one approval, one diff): `files` are
        `SetFile`s (a file's text replaced, created, deleted, or moved with its text). The
        set's own steps then pass without a question: the writes of exactly those texts
        (each still guarded by its version, so the pin holds file by file), its deletes and
        moves, and so do the steps of its roll-back.

        Raises:
            FsError: `FS_REJECTED`, `FS_NOT_APPROVED`; `FS_NOT_ENCODABLE` for a text the
                file's codec cannot encode (nobody is asked).
        """
        if not any(self._required(file) for file in files):
            return
        changes: list[ProposedChange] = []
        diffs: list[str] = []
        for target, version, before, after, encoding, move_to in files:
            path = target.display_path
            if move_to is not None:
                diffs.append(f"rename from {path}\nrename to {move_to.display_path}\n")
                if after == before:  # a rename
                    changes.append(
                        ProposedChange(
                            action="move",
                            verb="move",
                            path=move_to.display_path,
                            source=path,
                            base=version,
                        )
                    )
                    continue
            if after is not None and after != before:
                # A patched move lands as its new text created at the destination (then
                # the source deleted): what the diff shows against the text before.
                where = move_to or target
                verb: Literal["edit", "write"] = "edit" if before is not None else "write"
                pinned = encoding if before is not None else None
                changes.append(
                    ProposedChange(
                        action="write",
                        verb=verb,
                        path=where.display_path,
                        base=None if move_to is not None else version,
                        content=after,
                        digest=digest_of(after)
                        if pinned is None
                        else _pinned_digest(after, pinned, verb, path, "new_string"),
                        encoding=None if pinned is None else _codec_name(pinned),
                    )
                )
                diffs.append(unified_diff(path, before, after))
            if after is None or move_to is not None:
                changes.append(
                    ProposedChange(action="delete", verb="delete", path=path, base=version)
                )
                if after is None:
                    diffs.append(unified_diff(path, before, None))
        approval = await self._ask(tuple(changes), "".join(diffs))
        for target, _, before, after, _, move_to in files:
            key = str(target.target_key)
            for text in (before, after):
                if text is not None:
                    self._granted[(key, digest_of(text))] = approval
            self._granted[(key, _DELETE)] = approval  # a delete, or a create's roll-back
            if move_to is not None:
                other = str(move_to.target_key)
                self._granted[(key, other)] = approval  # a rename and its roll-back
                self._granted[(other, key)] = approval
                if after is not None:  # a patched move: its text created there, and removed
                    self._granted[(other, digest_of(after))] = approval
                    self._granted[(other, _DELETE)] = approval

    def _required(self, file: SetFile) -> bool:
        target, _, before, after, _, move_to = file
        path = target.display_path
        if after is None:
            return self.gate.required("delete", (path,), overwrites=False)
        if move_to is not None and self.gate.required(
            "move", (path, move_to.display_path), overwrites=False
        ):
            return True
        return after != before and self.gate.required(
            "write", (path,), overwrites=before is not None
        )

    def _recorded(self, capture: FsCapture | None, approval: Approval) -> FsCapture | None:
        if capture is None:
            return None
        return capture.approved(approval.by or "callback", approval.note)

    # -- the mutations -----------------------------------------------------------------------

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        granted = self._granted.get((str(target.target_key), digest_of(content)))
        if granted is not None:
            capture = self._recorded(capture, granted)
            return await self.wrapped.write_text(target, content, expected, capture=capture)
        info = await self.wrapped.stat(target)
        overwrites = info is not None
        if not self.gate.required("write", (target.display_path,), overwrites=overwrites):
            return await self.wrapped.write_text(target, content, expected, capture=capture)
        # The base is the caller's observation when the policy gave one; without a policy,
        # the file as it is now (what the diff is computed from).
        base: FsVersion | None
        if isinstance(expected, ReplaceIfVersion):
            base = expected.version
        elif isinstance(expected, CreateIfAbsent) or info is None:
            base = None
        else:
            base = info.version
        if (base is None and info is not None) or (
            base is not None and (info is None or info.version != base)
        ):
            # The guard refuses this write anyway: nobody is asked about a change that
            # cannot land; the provider gives its own refusal.
            return await self.wrapped.write_text(target, content, expected, capture=capture)
        before, shown = None, content
        digest, codec = digest_of(content), None
        replaced_size = None  # a file that is not text, replaced whole: its size in bytes
        prior = await _text_or_none(self.wrapped, target) if base is not None else None
        if base is not None and prior is None:
            # Binary, or no text in any encoding: replaced whole as UTF-8, guarded by its
            # version; the person sees its size, not its bytes (as for a delete).
            assert info is not None  # a base is the version of the file found above
            replaced_size = info.size
        elif prior is not None:
            decoded, seen = prior
            if seen != base:
                raise messages.write_stale(target.display_path)
            # The write keeps the file's codec and BOM (SPEC §12): those are the bytes.
            before, codec = decoded.text, _codec_name(decoded.encoding)
            digest = _pinned_digest(
                content, decoded.encoding, "write", target.display_path, "content"
            )
            if decoded.encoding.bom and not content.startswith("\ufeff"):
                shown = "\ufeff" + content  # the BOM stays: the diff shows no change there
        change = ProposedChange(
            action="write",
            verb="write",
            path=target.display_path,
            base=base,
            content=content,
            digest=digest,
            encoding=codec,
        )
        if replaced_size is None:
            diff = unified_diff(target.display_path, before, shown)
        else:
            added = unified_diff(target.display_path, "", shown).split("\n", 2)[2]
            path = _slashed(target.display_path)
            diff = f"--- a{path}\n+++ b{path}\n(replaced: {replaced_size} bytes, not text)\n{added}"
        approval = await self._ask((change,), diff)
        guard: WriteGuard = ReplaceIfVersion(base) if base is not None else CreateIfAbsent()
        try:
            return await self.wrapped.write_text(
                target, content, guard, capture=self._recorded(capture, approval)
            )
        except FsError as error:
            raise _pinned(error, "write", target.display_path, base) from None

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        if not self.gate.required("write", (target.display_path,), overwrites=False):
            return await self.wrapped.edit_text(target, edit, expected, capture=capture)
        path = target.display_path
        info = await self.wrapped.stat(target)
        if info is None or (expected is not None and info.version != expected):
            raise messages.edit_stale(path)
        decoded, base = await current_decoded(self.wrapped, target, "edit")
        if expected is not None and base != expected:
            raise messages.edit_stale(path)
        # The edit applied in memory to the text of the base version: the diff shown and
        # the bytes published are the same text, in the file's codec (SPEC §12; for a
        # codec that proved the file, the bytes outside the replaced span are its own).
        before = decoded.text
        after, count = apply_change(before, edit, path)
        change = ProposedChange(
            action="write",
            verb="edit",
            path=path,
            base=base,
            content=after,
            digest=_pinned_digest(after, decoded.encoding, "edit", path, "new_string"),
            encoding=_codec_name(decoded.encoding),
        )
        approval = await self._ask((change,), unified_diff(path, before, after))
        try:
            outcome = await self.wrapped.write_text(
                target, after, ReplaceIfVersion(base), capture=self._recorded(capture, approval)
            )
        except FsError as error:
            raise _pinned(error, "edit", path, base) from None
        return FsEditOutcome(
            version=outcome.version, before=before, after=after, replacements=count
        )

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        granted = self._granted.get((str(target.target_key), _DELETE))
        if granted is not None:  # a step of an approved set
            capture = self._recorded(capture, granted)
            return await self.wrapped.delete(target, expected, capture=capture)
        if not self.gate.required("delete", (target.display_path,), overwrites=False):
            return await self.wrapped.delete(target, expected, capture=capture)
        path = target.display_path
        info = await self.wrapped.stat(target)
        if info is None or info.type is not FsFileType.FILE:
            return await self.wrapped.delete(target, expected, capture=capture)
        if expected is not None and info.version != expected:
            raise messages.delete_stale(path)
        base = info.version
        try:
            before: str | None
            before, base = await current_text(self.wrapped, target, "delete")
            diff = unified_diff(path, before, None)
        except FsError as error:
            if error.code is FsErrorCode.STALE_VERSION:
                raise
            diff = f"--- a{_slashed(path)}\n+++ /dev/null\n(deleted: {info.size} bytes, not text)\n"
        if expected is not None and base != expected:
            raise messages.delete_stale(path)
        change = ProposedChange(action="delete", verb="delete", path=path, base=base)
        approval = await self._ask((change,), diff)
        try:
            return await self.wrapped.delete(
                target, base, capture=self._recorded(capture, approval)
            )
        except FsError as error:
            raise _pinned(error, "delete", path, base) from None

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        granted = self._granted.get((str(source.target_key), str(destination.target_key)))
        if granted is not None:  # a step of an approved set
            capture = self._recorded(capture, granted)
            return await self.wrapped.move(source, destination, expected, replace, capture=capture)
        paths = (source.display_path, destination.display_path)
        if not self.gate.required("move", paths, overwrites=False):
            return await self.wrapped.move(source, destination, expected, replace, capture=capture)
        info = await self.wrapped.stat(source)
        base = expected
        if base is None and info is not None and info.type is FsFileType.FILE:
            base = info.version
        if expected is not None and (info is None or info.version != expected):
            raise messages.move_stale(source.display_path)
        change = ProposedChange(
            action="move",
            verb="move",
            path=destination.display_path,
            source=source.display_path,
            base=base,
        )
        diff = f"rename from {source.display_path}\nrename to {destination.display_path}\n"
        approval = await self._ask((change,), diff)
        return await self.wrapped.move(
            source, destination, base, replace, capture=self._recorded(capture, approval)
        )

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        if not self.gate.required("mkdir", (target.display_path,), overwrites=False):
            return await self.wrapped.mkdir(target, capture=capture)
        change = ProposedChange(action="mkdir", verb="mkdir", path=target.display_path)
        approval = await self._ask((change,), f"new directory {target.display_path}\n")
        return await self.wrapped.mkdir(target, capture=self._recorded(capture, approval))

    async def delete_dir(self, target: FsTarget) -> None:
        if self.gate.required("delete_dir", (target.display_path,), overwrites=False):
            change = ProposedChange(action="delete_dir", verb="delete", path=target.display_path)
            await self._ask((change,), f"remove empty directory {target.display_path}\n")
        await self.wrapped.delete_dir(target)

    async def delete_link(self, target: FsTarget) -> None:
        if self.gate.required("delete_link", (target.display_path,), overwrites=False):
            change = ProposedChange(action="delete_link", verb="delete", path=target.display_path)
            await self._ask((change,), f"remove symbolic link {target.display_path}\n")
        await self.wrapped.delete_link(target)


def _same_digest(content: str, encoding: FsEncoding, digest: str | None) -> bool:
    try:
        return digest_of(content, encoding) == digest
    except UnicodeEncodeError:
        return False


SetFile: TypeAlias = tuple[
    FsTarget, "FsVersion | None", "str | None", "str | None", FsEncoding, "FsTarget | None"
]
"""One file of a change set as `ApprovingFileSystem.approve_set` proposes it: the target, the
version staging read (None: no file), the text before (None: no file) and after (None: the
set deletes it), the encoding it is in, and where the set moves it (None: nowhere)."""

_DELETE: Final = "\0delete"
"""The `_granted` key of a set's delete of a file (no digest or target key looks like it)."""


def _pinned(error: FsError, verb: messages.Verb, path: str, base: FsVersion | None) -> FsError:
    """The publication's refusal in the words of the tool the model called: the file is no
    longer at the proposal's base (or a file appeared where none was), so it is stale."""
    del base
    if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
        return _stale(verb, path)
    return error


async def apply_proposal(
    context: Context,
    execution: ToolExecution,
    gate: ApprovalGate,
    proposal: Proposal,
    approval: Approval,
) -> ToolResult:
    """Publish `proposal` now, under its pin (`dsh_fs.workspace.Session.apply`): a result,
    never an exception, for every refusal."""
    try:
        paths = await _publish(context, execution, gate, proposal, approval)
    except FsError as error:
        return ToolResult.failure(
            proposal.tool,
            code=error.code.value,
            message=message_with_remedy(error),
            error_name="FsError",
            details=error.details,
        )
    text = "\n".join(f'Applied the approved change to "{path}".' for path in paths)
    value = {"paths": list(paths), "proposal": proposal.id}
    return ToolResult(
        tool=proposal.tool, is_error=False, text=text, data=value, to_json=lambda _: dict(value)
    )


@dataclass(slots=True)
class _Published:
    target: FsTarget
    before: str
    version: FsVersion


async def _publish(
    context: Context,
    execution: ToolExecution,
    gate: ApprovalGate,
    proposal: Proposal,
    approval: Approval,
) -> tuple[str, ...]:
    first = proposal.changes[0]
    if not approval.approved:
        raise messages.rejected(first.path, approval.note)
    # A proposal is data from outside (held by a framework, maybe for hours): refused unless
    # it is this workspace's, not published before, and its content still has its digest.
    if proposal.workspace != gate.workspace or proposal.id in gate.used:
        raise messages.not_approved(first.verb, first.path)
    for change in proposal.changes:
        # A new file's bytes are its UTF-8 (`digest_of`); a replaced file's are checked
        # against the base file's codec and BOM below, once it is read.
        if change.action == "write" and (
            change.content is None
            or (
                change.base is None
                and (change.encoding is not None or digest_of(change.content) != change.digest)
            )
        ):
            raise messages.not_approved(change.verb, change.path)
    fs = context.get(FS)
    # Resolved through the session's fence: a path outside it is refused here.
    targets = [await fs.resolve(change.path) for change in proposal.changes]
    # Every file is checked at its base before anything lands, so a set that moved on
    # refuses whole; the text of each base is what a roll-back would put back.
    befores: list[str | None] = []
    for change, target in zip(proposal.changes, targets, strict=True):
        before: str | None = None
        if change.action == "write" and change.base is not None:
            decoded, seen = await current_decoded(fs, target, change.verb)
            if seen != change.base:
                raise _stale(change.verb, change.path)
            before = decoded.text
            # Pinned to the bytes: the content in the codec and BOM the base file has (the
            # write keeps them) must be the bytes whose digest was approved.
            assert change.content is not None  # checked above
            if _codec_name(decoded.encoding) != change.encoding or not _same_digest(
                change.content, decoded.encoding, change.digest
            ):
                raise messages.not_approved(change.verb, change.path)
        elif change.action == "write" and await fs.stat(target) is not None:
            raise _stale(change.verb, change.path)
        befores.append(before)
    gate.used.add(proposal.id)  # before publishing: a replay racing this one is refused
    group = f"set-{secrets.token_hex(8)}" if len(proposal.changes) > 1 else None
    published: list[_Published] = []
    by = approval.by or "callback"
    for change, target, before in zip(proposal.changes, targets, befores, strict=True):
        capture = await capture_for(context, execution, target, group=group)
        if capture is not None:
            capture = capture.approved(by, approval.note)
        try:
            await _publish_one(context, execution, fs, change, target, capture, before, published)
        except FsError as error:
            await _roll_back(context, execution, fs, published)
            raise _pinned(error, change.verb, change.path, change.base) from None
    return proposal.paths


async def _publish_one(
    context: Context,
    execution: ToolExecution,
    fs: FileSystem,
    change: ProposedChange,
    target: FsTarget,
    capture: FsCapture | None,
    before: str | None,
    published: list[_Published],
) -> None:
    if change.action == "write":
        assert change.content is not None  # checked with the digests
        guard: WriteGuard = (
            ReplaceIfVersion(change.base) if change.base is not None else CreateIfAbsent()
        )
        outcome = await fs.write_text(target, change.content, guard, capture=capture)
        if before is not None:
            published.append(_Published(target, before, outcome.version))
        await observe(context, execution, target, Present(outcome.version))
    elif change.action == "delete":
        if change.base is None:
            raise messages.delete_stale(change.path)
        await fs.delete(target, change.base, capture=capture)
        await observe(context, execution, target, Absent())
    elif change.action == "move":
        if change.source is None:
            raise messages.not_approved("move", change.path)
        source = await fs.resolve(change.source)
        moved = await fs.move(source, target, change.base, capture=capture)
        await observe(context, execution, source, Absent())
        if moved.version is not None:
            await observe(context, execution, target, Present(moved.version))
    elif change.action == "mkdir":
        await fs.mkdir(target, capture=capture)
    elif change.action == "delete_dir":
        await fs.delete_dir(target)
    else:
        await fs.delete_link(target)


async def _roll_back(
    context: Context, execution: ToolExecution, fs: FileSystem, published: list[_Published]
) -> None:
    """Put back the files of a set already published, newest first, each only at the
    version its publication made (as a change set rolls back, SPEC §13)."""
    for done in reversed(published):
        try:
            capture = await capture_for(context, execution, done.target)
            restored = await fs.write_text(
                done.target, done.before, ReplaceIfVersion(done.version), capture=capture
            )
        except FsError:
            continue  # someone changed it since: their change stands
        await observe(context, execution, done.target, Present(restored.version))
