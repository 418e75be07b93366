"""Every model-facing `FsError` message (SPEC §3, §5, §8), built in exactly one place.

Providers, wrappers and the policy raise what these functions return; nothing else spells a
message. `verb` is the operation the model asked for, as the message names it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from dsh_fs.errors import FsError, FsErrorCode

__all__ = [
    "Verb",
    "aborted",
    "ambiguous_edit",
    "binary_file",
    "delete_dir_unsupported",
    "delete_gone",
    "delete_stale",
    "delete_unsupported",
    "edit_gone",
    "edit_not_found",
    "edit_stale",
    "fenced_out",
    "holds_fenced_out",
    "hunk_not_found",
    "image_too_large",
    "insert_out_of_range",
    "invalid_path",
    "invalid_pattern",
    "invalid_utf8",
    "io_error",
    "is_root",
    "journal_failed",
    "kept_changing",
    "mkdir_blocked",
    "mkdir_unsupported",
    "move_across_filesystems",
    "move_destination_stale",
    "move_exists",
    "move_gone",
    "move_into_itself",
    "move_left_both",
    "move_onto_itself",
    "move_stale",
    "move_unsupported",
    "names_no_entry",
    "not_a_directory",
    "not_approved",
    "not_empty",
    "not_encodable",
    "not_found",
    "not_observed",
    "not_regular_file",
    "outside_root",
    "overwrite_unobserved",
    "parent_not_directory",
    "permission_denied",
    "placeholder",
    "rejected",
    "repeated_miss",
    "replaced_by_edit",
    "restore_exists",
    "restore_stale",
    "restore_unsupported",
    "rule_denied",
    "rule_protected",
    "sandbox_denied",
    "search_aborted",
    "shown",
    "symlink_loop",
    "too_large",
    "workspace_closed",
    "write_gone",
    "write_stale",
]

Verb: TypeAlias = Literal[
    "read", "write", "edit", "delete", "move", "mkdir", "list", "search", "access"
]
"""The operation a message names: a tool's, or ``access`` for a path no operation may touch."""


def _error(
    code: FsErrorCode,
    verb: Verb,
    path: str,
    what: str,
    details: Mapping[str, Any] | None = None,
) -> FsError:
    spelled = "create directory" if verb == "mkdir" else verb
    return FsError(code, f'cannot {spelled} "{path}": {what}', path=path, details=details)


def not_found(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": not found` (FS_NOT_FOUND). Also the policy's edit of a file it
    saw absent (SPEC §5)."""
    return _error(FsErrorCode.NOT_FOUND, verb, path, "not found")


def parent_not_directory(path: str) -> FsError:
    """A path below something that is not a directory (``a.txt/child``) names no file
    (FS_NOT_FOUND), in upstream's words."""
    return FsError(
        FsErrorCode.NOT_FOUND,
        f'cannot resolve "{path}": a parent path segment is not a directory',
        path=path,
    )


def symlink_loop(verb: Verb, path: str) -> FsError:
    """A symbolic link loop, or a chain too long to resolve: like a dangling link, it names no
    file (FS_NOT_FOUND)."""
    return _error(FsErrorCode.NOT_FOUND, verb, path, "too many levels of symbolic links")


def invalid_path(path: str) -> FsError:
    """`FS_NOT_FOUND` for a path no file can have: empty, or containing a NUL byte or a lone
    surrogate (no UTF-8 form). The path is shown with those escaped, so the message itself
    is always valid text."""
    if not path:
        return FsError(FsErrorCode.NOT_FOUND, "cannot resolve an empty path", path=path)
    what = "a NUL byte" if "\0" in path else "a lone surrogate"
    shown = "".join(
        "\\0" if char == "\0" else f"\\u{ord(char):04x}" if "\ud800" <= char <= "\udfff" else char
        for char in path
    )
    return FsError(
        FsErrorCode.NOT_FOUND, f'cannot resolve "{shown}": the path contains {what}', path=shown
    )


def not_regular_file(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": not a regular file` (FS_NOT_REGULAR_FILE)."""
    return _error(FsErrorCode.NOT_REGULAR_FILE, verb, path, "not a regular file")


def not_a_directory(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": not a directory` (FS_NOT_DIRECTORY)."""
    return _error(FsErrorCode.NOT_DIRECTORY, verb, path, "not a directory")


def binary_file(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": binary file` (FS_NOT_TEXT)."""
    return _error(FsErrorCode.NOT_TEXT, verb, path, "binary file")


def invalid_utf8(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": invalid UTF-8 text` (FS_NOT_TEXT)."""
    return _error(FsErrorCode.NOT_TEXT, verb, path, "invalid UTF-8 text")


def not_encodable(
    verb: Literal["edit", "write"], path: str, codec: str, char: str, where: str
) -> FsError:
    """`cannot <verb> "<p>": <codec> cannot encode "<c>" (U+XXXX) in <where>`
    (FS_NOT_ENCODABLE, SPEC §12): `where` is ``new_string`` or ``content``."""
    return _error(
        FsErrorCode.NOT_ENCODABLE,
        verb,
        path,
        f'{codec} cannot encode "{shown(char)}" (U+{ord(char):04X}) in {where}',
        {"codec": codec, "character": char},
    )


def too_large(verb: Verb, path: str, max_bytes: int) -> FsError:
    """`cannot <verb> "<p>": larger than <n> bytes` (FS_TOO_LARGE)."""
    return _error(FsErrorCode.TOO_LARGE, verb, path, f"larger than {max_bytes} bytes")


def image_too_large(path: str, size: int, max_bytes: int) -> FsError:
    """`cannot read "<p>": image of <n> bytes is over the <m>-byte limit` (FS_TOO_LARGE,
    SPEC §10)."""
    return _error(
        FsErrorCode.TOO_LARGE,
        "read",
        path,
        f"image of {size} bytes is over the {max_bytes}-byte limit",
    )


def permission_denied(verb: Verb, path: str, what: str = "permission denied") -> FsError:
    """The system or the storage refused (FS_PERMISSION_DENIED); `what` may say why
    (``read-only file system``)."""
    return _error(FsErrorCode.PERMISSION_DENIED, verb, path, what)


def io_error(verb: Verb, path: str, what: str) -> FsError:
    """Any other failure, in a few plain words (FS_IO_ERROR): ``no space left on device``."""
    return _error(FsErrorCode.IO_ERROR, verb, path, what)


def journal_failed(verb: Verb, path: str, location: str, what: str) -> FsError:
    """The journal could not keep a change's pre-image or record (FS_IO_ERROR): the change
    is refused and the file is unchanged."""
    return _error(
        FsErrorCode.IO_ERROR,
        verb,
        path,
        f"the change journal at {location} failed ({what}); nothing was changed",
        {"journal": location},
    )


def restore_stale(path: str) -> FsError:
    """An undo found the file other than its change left it (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "write", path, "file changed since the change")


def restore_link_in_way(path: str) -> FsError:
    """An undo that recreates a file found a link at its path, maybe dangling
    (FS_STALE_VERSION): it never writes through one."""
    return _error(
        FsErrorCode.STALE_VERSION, "write", path, "a link is in the way (nothing was written)"
    )


def restore_exists(path: str) -> FsError:
    """An undo of a delete found something at the path now (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "write", path, "a file exists there now")


def restore_unsupported(path: str) -> FsError:
    """A provider without the restore primitive (FS_PERMISSION_DENIED)."""
    return permission_denied("write", path, "this storage does not support undo")


def kept_changing(verb: Verb, path: str) -> FsError:
    """Another process kept replacing the path while it was looked at (FS_IO_ERROR); the
    next step is to try again."""
    return _error(FsErrorCode.IO_ERROR, verb, path, "it kept changing while it was read; retry")


def aborted(verb: Verb, path: str) -> FsError:
    """The provider was closed before the operation took effect (FS_ABORTED)."""
    return _error(FsErrorCode.ABORTED, verb, path, "the filesystem was closed")


def workspace_closed(tool: str) -> FsError:
    """A call made after its workspace was closed (FS_ABORTED): nothing was run."""
    return FsError(FsErrorCode.ABORTED, f"cannot run {tool}: the workspace is closed")


def sandbox_denied(verb: Verb, path: str, reason: str, mode: str) -> FsError:
    """A sandbox refusal (FS_SANDBOX_DENIED), naming the reason and the mode:
    `cannot write "/etc/x": outside the sandbox [sandbox: file access denied under
    workspace-write mode]`."""
    return _error(
        FsErrorCode.SANDBOX_DENIED,
        verb,
        path,
        f"{reason} [sandbox: file access denied under {mode} mode]",
    )


def outside_client_roots(roots: Sequence[str], *, roots_given: bool) -> str:
    """Why the fence an MCP client's roots make refuses a path (SPEC §10.1), as the reason
    of `sandbox_denied`: `outside the client's roots (<r1>, …)`, or, when the client named
    none and the server was given no ROOT, `the MCP client named no roots`."""
    if not roots and not roots_given:
        return "the MCP client named no roots"
    return f"outside the client's roots ({', '.join(roots) or 'none named'})"


def outside_root(path: str, root: str) -> FsError:
    """A remote path outside the workspace's root URL (FS_SANDBOX_DENIED)."""
    return _error(FsErrorCode.SANDBOX_DENIED, "access", path, f"outside the workspace root {root}")


def overwrite_unobserved(path: str) -> FsError:
    """A `CreateIfAbsent` write found a file (FS_NOT_OBSERVED)."""
    return FsError(
        FsErrorCode.NOT_OBSERVED,
        f'cannot overwrite existing "{path}" without reading it first',
        path=path,
    )


def not_observed(verb: Literal["edit", "delete", "move"], path: str) -> FsError:
    """The policy: an edit, a delete or a move of a file this session never read
    (FS_NOT_OBSERVED)."""
    return FsError(FsErrorCode.NOT_OBSERVED, f'{verb} requires reading "{path}" first', path=path)


def ledger_unreachable(verb: Literal["write", "edit", "delete", "move"], path: str) -> FsError:
    """The policy: the shared observation ledger did not answer, so nothing is known about
    what was read; the mutation is refused rather than guessed (FS_NOT_OBSERVED, SPEC §14)."""
    return FsError(
        FsErrorCode.NOT_OBSERVED,
        f'{verb} of "{path}" refused: the observation ledger is unreachable, so it is not known'
        " whether the file was read; retry later",
        path=path,
    )


def rejected(path: str, note: str | None) -> FsError:
    """`the user rejected this change to "<p>"`, then `: <note>` when the person gave one
    (FS_REJECTED, SPEC §11.2)."""
    said = f": {note}" if note else ""
    return FsError(
        FsErrorCode.REJECTED, f'the user rejected this change to "{path}"{said}', path=path
    )


def not_approved(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": approval required and none was given` (FS_NOT_APPROVED, SPEC
    §11.2): nobody answered in time, or there is nobody to ask."""
    return _error(FsErrorCode.NOT_APPROVED, verb, path, "approval required and none was given")


def write_stale(path: str) -> FsError:
    """A `ReplaceIfVersion` write found another version (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "write", path, "file changed since it was read")


def write_gone(path: str) -> FsError:
    """A `ReplaceIfVersion` write found no file (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "write", path, "file no longer exists")


def edit_stale(path: str) -> FsError:
    """A guarded edit found another version (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "edit", path, "file changed since it was read")


def edit_gone(path: str) -> FsError:
    """An edit found no file, guarded or not (FS_STALE_VERSION). Upstream words it like any
    other stale edit (SPEC §3 has one edit message), so the model re-reads either way."""
    return edit_stale(path)


def edit_not_found(
    path: str, diagnosis: str = "", details: Mapping[str, Any] | None = None
) -> FsError:
    """`old_string was not found in "<p>"` (FS_EDIT_NOT_FOUND), then the diagnosis lines
    that help the model find what it meant (SPEC §8.2, worded in `fs.diagnosis._wording`), if
    any."""
    message = f'old_string was not found in "{path}"'
    if diagnosis:
        message += "\n" + diagnosis
    return FsError(FsErrorCode.EDIT_NOT_FOUND, message, path=path, details=details)


def ambiguous_edit(
    path: str, count: int, diagnosis: str = "", details: Mapping[str, Any] | None = None
) -> FsError:
    """`old_string matched <n> times in "<p>"; …` (FS_AMBIGUOUS_EDIT), then where the
    matches start (SPEC §8.2), if given."""
    message = (
        f'old_string matched {count} times in "{path}"; '
        "provide a more specific old_string or set replace_all to true"
    )
    if diagnosis:
        message += "\n" + diagnosis
    return FsError(FsErrorCode.AMBIGUOUS_EDIT, message, path=path, details=details)


def placeholder(
    verb: Literal["write", "edit"], path: str, line: int, text: str, removed: int
) -> FsError:
    """`cannot <verb> "<p>": line <n> of the new text ("<line>") looks like a placeholder for
    omitted code, and the change would remove <k> lines — …` (FS_PLACEHOLDER, SPEC §8.3)."""
    what = (
        f'line {line} of the new text ("{shown(text)}") looks like a placeholder for omitted '
        f"code, and the change would remove {removed} lines \u2014 write the full text, or use "
        "edit for a partial change"
    )
    details = {"line": line, "text": text, "removed": removed}
    return _error(FsErrorCode.PLACEHOLDER, verb, path, what, details)


def repeated_miss(error: FsError, read_call: str, offset: int, limit: int) -> FsError:
    """An `FS_EDIT_NOT_FOUND` the session already had, with the same old_string, on the
    unchanged file (SPEC §8.3): its first line, then ``This old_string failed the same way
    before; the file has not changed since.`` and the read call to make, then the rest of
    its diagnosis."""
    first, _, rest = error.message.partition("\n")
    note = (
        "This old_string failed the same way before; the file has not changed since. "
        f"Read the lines again before another edit: {read_call}"
    )
    message = "\n".join(part for part in (first, note, rest) if part)
    details = {**error.details, "repeated": True, "read": {"offset": offset, "limit": limit}}
    return FsError(FsErrorCode.EDIT_NOT_FOUND, message, path=error.path, details=details)


def replaced_by_edit(
    error: FsError, clock: str, start: int, end: int, lines: list[tuple[int, str]]
) -> FsError:
    """An `FS_EDIT_NOT_FOUND` whose old_string is text the session's own edit at `clock`
    (``HH:MM`` UTC) replaced: its first line, then ``Your edit at <clock> replaced these
    lines; they now read (lines a-b):`` and the lines as read shows them, then the rest of
    its diagnosis (which may name a near-copy of the old text)."""
    first, _, rest = error.message.partition("\n")
    span = f"line {start}" if start == end else f"lines {start}-{end}"
    note = [f"Your edit at {clock} UTC replaced these lines; they now read ({span}):"]
    note += [f"{number}: {text[:160]}" for number, text in lines]
    if lines and lines[-1][0] < end:
        note.append(f"(showing lines {lines[0][0]}-{lines[-1][0]} of {start}-{end})")
    message = "\n".join([first, *note, *([rest] if rest else [])])
    details = {**error.details, "your_edit": {"start": start, "end": end, "at": clock}}
    return FsError(FsErrorCode.EDIT_NOT_FOUND, message, path=error.path, details=details)


def delete_stale(path: str) -> FsError:
    """A guarded delete found another version (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "delete", path, "file changed since it was read")


def delete_gone(path: str) -> FsError:
    """A guarded delete found no file (FS_STALE_VERSION): someone else removed it."""
    return _error(FsErrorCode.STALE_VERSION, "delete", path, "file no longer exists")


def delete_unsupported(path: str) -> FsError:
    """A provider without a delete primitive (FS_PERMISSION_DENIED)."""
    return permission_denied("delete", path, "this storage does not support deleting files")


def insert_out_of_range(path: str, line: int, total_lines: int) -> FsError:
    """An insert after a line the file does not have (FS_NOT_FOUND, as `read`'s offset)."""
    return FsError(
        FsErrorCode.NOT_FOUND,
        f'insert line {line} is out of range for "{path}" ({total_lines} lines); '
        f"insert after a line from 0 (the top) to {total_lines}",
        path=path,
    )


def hunk_not_found(
    path: str, hunk: int, diagnosis: str = "", details: Mapping[str, Any] | None = None
) -> FsError:
    """A patch hunk whose lines (or ``@@`` line) do not occur where the hunk must be
    (FS_EDIT_NOT_FOUND, as an edit's `old_string`), then the diagnosis lines, if any."""
    message = f'hunk {hunk} of the patch was not found in "{path}"'
    if diagnosis:
        message += "\n" + diagnosis
    return FsError(FsErrorCode.EDIT_NOT_FOUND, message, path=path, details=details)


def shown(text: str) -> str:
    """`text` (a name, a path, a pattern) made safe to show on one line and to encode as
    UTF-8, as ``ls -b`` shows names: text without control characters or lone surrogates is
    unchanged; otherwise ``\\n``, ``\\t`` and ``\\r`` stand for themselves, other C0
    controls and DEL for ``\\xNN``, C1 controls and the line and paragraph separators for
    ``\\uNNNN``, an undecodable byte of a file name (U+DC80..U+DCFF) for ``\\xNN``, another
    lone surrogate for ``\\udXXX``, and a backslash for ``\\\\`` (so an escaped name is never
    mistaken for another). Showing shown text again changes nothing."""
    if _UNSHOWABLE.search(text) is None:
        return text
    return "".join(_escaped(char) for char in text)


_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def _escaped(char: str) -> str:
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if 0x7F < code <= 0x9F or code in (0x2028, 0x2029) or 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return char


def invalid_pattern(kind: Literal["regex", "glob"], pattern: str, reason: str) -> FsError:
    """A search pattern that does not compile (SEARCH_INVALID_PATTERN), with why."""
    hint = (
        " (ripgrep regex syntax; lookaround and backreferences are not supported)"
        if kind == "regex"
        else ""
    )
    return FsError(
        FsErrorCode.SEARCH_INVALID_PATTERN, f'invalid {kind} "{shown(pattern)}": {reason}{hint}'
    )


def search_aborted(path: str, seconds: float, narrow: str) -> FsError:
    """A search that ran past its time budget (SEARCH_ABORTED); nothing partial is returned.
    `narrow` names what the model can narrow (``pattern or path``)."""
    return FsError(
        FsErrorCode.SEARCH_ABORTED,
        f'cannot search "{path}": stopped after {seconds:g} seconds; narrow {narrow} and retry',
        path=path,
    )


# File management (SPEC §10): move, delete of directories and links, mkdir.


def move_exists(source: str, destination: str) -> FsError:
    """A move's destination exists and was not read at its current version
    (FS_ALREADY_EXISTS); an existing directory is never moved into."""
    return FsError(
        FsErrorCode.ALREADY_EXISTS,
        f'cannot move "{source}" to "{destination}": destination exists; '
        "read it first to replace it",
        path=destination,
        details={"source": source},
    )


def move_onto_itself(source: str, destination: str) -> FsError:
    """Source and destination name the same entry (FS_ALREADY_EXISTS)."""
    return FsError(
        FsErrorCode.ALREADY_EXISTS,
        f'cannot move "{source}" to "{destination}": it is the same path',
        path=destination,
        details={"source": source},
    )


def move_into_itself(source: str, destination: str) -> FsError:
    """A directory moved into itself or below (FS_PERMISSION_DENIED, the kernel's EINVAL)."""
    return FsError(
        FsErrorCode.PERMISSION_DENIED,
        f'cannot move "{source}" to "{destination}": a directory cannot move into itself',
        path=destination,
        details={"source": source},
    )


def move_stale(path: str) -> FsError:
    """A guarded move found the source at another version (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "move", path, "file changed since it was read")


def move_gone(path: str) -> FsError:
    """A guarded move found no source any more (FS_STALE_VERSION)."""
    return _error(FsErrorCode.STALE_VERSION, "move", path, "file no longer exists")


def move_destination_stale(source: str, destination: str) -> FsError:
    """The destination a move was to replace changed since it was read (FS_STALE_VERSION)."""
    return FsError(
        FsErrorCode.STALE_VERSION,
        f'cannot move "{source}" to "{destination}": destination changed since it was read',
        path=destination,
        details={"source": source},
    )


def move_left_both(source: str, destination: str, why: str) -> FsError:
    """A copying move published the destination but could not remove the source
    (FS_IO_ERROR): both now exist."""
    return FsError(
        FsErrorCode.IO_ERROR,
        f'copied "{source}" to "{destination}" but could not remove "{source}" ({why}): '
        "both now exist",
        path=source,
        details={"destination": destination},
    )


def move_across_filesystems(path: str) -> FsError:
    """A directory whose move would need a copy of a whole tree (FS_IO_ERROR)."""
    return io_error("move", path, "a directory cannot be moved to another filesystem")


def move_unsupported(path: str, what: str) -> FsError:
    """A provider that cannot move this kind of entry (FS_PERMISSION_DENIED)."""
    return permission_denied("move", path, f"this storage does not support moving {what}")


def mkdir_unsupported(path: str) -> FsError:
    """A provider without directories to create (FS_PERMISSION_DENIED)."""
    return permission_denied("mkdir", path, "this storage does not support creating directories")


def mkdir_blocked(path: str) -> FsError:
    """A file where the directory or one of its parents should be (FS_NOT_DIRECTORY)."""
    return _error(FsErrorCode.NOT_DIRECTORY, "mkdir", path, "a file is in the way")


def not_empty(path: str) -> FsError:
    """`cannot delete "<p>": directory not empty` (FS_NOT_EMPTY)."""
    return _error(FsErrorCode.NOT_EMPTY, "delete", path, "directory not empty")


def delete_dir_unsupported(path: str) -> FsError:
    """A provider without directories to remove (FS_PERMISSION_DENIED)."""
    return permission_denied("delete", path, "this storage does not support deleting directories")


def is_root(verb: Verb, path: str) -> FsError:
    """A move or delete of the workspace's root directory (FS_PERMISSION_DENIED)."""
    return permission_denied(verb, path, "it is the workspace root")


def names_no_entry(verb: Verb, path: str) -> FsError:
    """A path ending in ``.`` or ``..`` names a directory by a relation, not an entry that a
    move or delete could take away (FS_NOT_FOUND)."""
    return _error(FsErrorCode.NOT_FOUND, verb, path, 'a path ending in "." or ".." names no entry')


def rule_denied(verb: Verb, path: str, pattern: str) -> FsError:
    """A mutation naming a path a deny rule hides (FS_SANDBOX_DENIED)."""
    return _error(
        FsErrorCode.SANDBOX_DENIED,
        verb,
        path,
        f'denied by rule "{pattern}"',
        {"rule": pattern, "kind": "deny"},
    )


def rule_protected(verb: Verb, path: str, pattern: str) -> FsError:
    """A mutation of a path a protect rule keeps unchanged (FS_SANDBOX_DENIED)."""
    return _error(
        FsErrorCode.SANDBOX_DENIED,
        verb,
        path,
        f'protected by rule "{pattern}"',
        {"rule": pattern, "kind": "protect"},
    )


def holds_fenced_out(verb: Verb, path: str, what: str) -> FsError:
    """A move or removal of a directory that holds a place no tool may reach
    (FS_SANDBOX_DENIED): `cannot move "<p>": it holds the change journal's store, which no
    tool may reach` (moved, the place would be somewhere no fence names)."""
    return _error(
        FsErrorCode.SANDBOX_DENIED, verb, path, f"it holds {what}, which no tool may reach"
    )


def fenced_out(verb: Verb, path: str, what: str) -> FsError:
    """A change naming a place no tool may reach (FS_SANDBOX_DENIED): `cannot write
    "<p>": inside the change journal's store, which no tool may reach`."""
    return _error(FsErrorCode.SANDBOX_DENIED, verb, path, f"inside {what}, which no tool may reach")
