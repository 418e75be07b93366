"""Cause classes for divergences, each with a precise predicate.

A divergence *item* is one tool call whose (is_error, text, code) differ between the two
sides, or one path of the scratch root whose entry differs after the case. Each item gets
the first class whose predicate holds. An item no predicate explains is ``cascade`` when
an earlier call of the same case already diverged (the two sides no longer share a
state), else ``unclassified`` — which the report lists one by one.

Whether a class is deliberate (ours on purpose) is not decided here: see decisions.json.
"""

from __future__ import annotations

import base64
import json
import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import Case, Entry, Result, StepResult
from .simulate import render_read

__all__ = [
    "CASCADE",
    "CLASSES",
    "UNCLASSIFIED",
    "CauseClass",
    "FileItem",
    "StepItem",
    "classify_file",
    "classify_step",
]

CASCADE = "cascade"
UNCLASSIFIED = "unclassified"

SCHEMA_KEYS = {
    "read": {"file_path", "offset", "limit"},
    "write": {"file_path", "content"},
    "edit": {"file_path", "old_string", "new_string", "replace_all"},
}
_SURROGATE = re.compile("[\ud800-\udfff]")
UPSTREAM_NUL_SNIFF = 8192
"""Upstream's read looks for a NUL in the first 8 KiB only."""


class RawInt(str):
    """An integer token of the arguments' JSON text, as written."""


class RawFloat(str):
    """A fraction/exponent token of the arguments' JSON text, as written."""


def parse_args(text: str) -> Any:
    """The arguments with every number kept as its JSON token (`RawInt`/`RawFloat`)."""
    return json.loads(text, parse_int=RawInt, parse_float=RawFloat)


@dataclass(frozen=True)
class StepItem:
    """A diverging tool call."""

    case: Case
    index: int
    upstream: StepResult
    ours: StepResult
    upstream_result: Result
    our_result: Result

    @property
    def name(self) -> str:
        return self.case["steps"][self.index].get("name", "")

    @property
    def args_text(self) -> str:
        return self.case["steps"][self.index].get("args", "")

    @property
    def args(self) -> Any:
        return parse_args(self.args_text)

    def arg(self, key: str) -> Any:
        args = self.args
        return args.get(key) if isinstance(args, dict) else None


@dataclass(frozen=True)
class FileItem:
    """A path of the scratch root whose entry differs after the case."""

    case: Case
    path: str
    upstream: Entry | None
    ours: Entry | None


@dataclass(frozen=True)
class CauseClass:
    """A class: its id, a one-line title and the cause, in prose, for the report."""

    id: str
    title: str
    cause: str
    step: Callable[[StepItem], bool] | None = None
    file: Callable[[FileItem], bool] | None = None


# ---------------------------------------------------------------------------------------
# helpers over cases and results
# ---------------------------------------------------------------------------------------


def _calls(case: Case) -> list[tuple[int, str, Any]]:
    return [
        (i, step.get("name", ""), parse_args(step.get("args", "null")))
        for i, step in enumerate(case["steps"])
        if step["op"] == "call"
    ]


def _file_path(args: Any) -> str | None:
    path = args.get("file_path") if isinstance(args, dict) else None
    return path if isinstance(path, str) else None


def _ok(result: StepResult | None) -> bool:
    return result is not None and not result["is_error"]


def _initial_bytes(case: Case, rel: str) -> bytes | None:
    for step in case["files"]:
        if step["op"] == "put" and step["path"] == f"work/{rel}":
            if "parts" in step:
                return b"".join(
                    base64.b64decode(part["b64"]) * part["repeat"] for part in step["parts"]
                )
            return base64.b64decode(step.get("b64", ""))
    return None


def _content_at(item: StepItem) -> bytes | None:
    """The read target's bytes, when known: an initial file no earlier step touched."""
    path = item.arg("file_path")
    if not isinstance(path, str):
        return None
    for step in item.case["steps"][: item.index]:
        if step["op"] != "call" or step.get("name") != "read":
            return None
    return _initial_bytes(item.case, path)


def _int_value(value: Any) -> int | None:
    if isinstance(value, (RawInt, RawFloat)):
        number = float(value) if isinstance(value, RawFloat) else int(value)
        if isinstance(number, float) and number.is_integer():
            return int(number)
        return number if isinstance(number, int) else None
    return None


def _entry_bytes(entry: Entry | None) -> bytes | None:
    if entry is None or entry["type"] != "file" or "b64" not in entry:
        return None
    return base64.b64decode(entry["b64"])


def _canonical_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.lstrip("\ufeff")
    while "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text


def _display(item: StepItem) -> str | None:
    """The display path of the call's relative file_path, as both sides normalize it."""
    path = item.arg("file_path")
    if not isinstance(path, str) or not path or path.startswith("/"):
        return None
    return posixpath.normpath(f"<cwd>/{path}")


def _escaped_path(path: str) -> str:
    """A path as dsh-fs shows one it refuses: NUL as two characters, backslash and 0; a lone
    surrogate as its ``\\u`` escape."""
    return "".join(
        "\\0" if char == "\0" else f"\\u{ord(char):04x}" if _SURROGATE.match(char) else char
        for char in path
    )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------------------------
# predicates over diverging calls: each checks dsh-fs's exact answer
# ---------------------------------------------------------------------------------------


def _value_check_code(item: StepItem) -> bool:
    return (
        item.upstream["is_error"]
        and item.ours["is_error"]
        and item.upstream["text"] == item.ours["text"]
        and item.upstream["code"] is None
        and item.ours["code"] == "INVALID_ARGS"
    )


def _extra_args(item: StepItem) -> bool:
    args = item.args
    keys = SCHEMA_KEYS.get(item.name)
    if keys is None or not isinstance(args, dict):
        return False
    extra = [key for key in args if key not in keys]
    expected = "Error: invalid arguments: " + "; ".join(
        f'"{key}" is not a declared property (additionalProperties: false)' for key in extra
    )
    return bool(extra) and item.ours["code"] == "INVALID_ARGS" and item.ours["text"] == expected


def _invalid_path(item: StepItem, what: str, pattern: str) -> bool:
    path = item.arg("file_path")
    if not isinstance(path, str) or not re.search(pattern, path):
        return False
    expected = f'Error: cannot resolve "{_escaped_path(path)}": the path contains {what}'
    return item.ours["code"] == "FS_NOT_FOUND" and item.ours["text"] == expected


def _nul_in_path(item: StepItem) -> bool:
    return item.upstream["is_error"] and _invalid_path(item, "a NUL byte", "\x00")


def _surrogate_path(item: StepItem) -> bool:
    return _invalid_path(item, "a lone surrogate", _SURROGATE.pattern)


def _lone_surrogate_written(item: StepItem) -> bool:
    written = item.arg("content") if item.name == "write" else item.arg("new_string")
    display = _display(item)
    return (
        item.name in {"write", "edit"}
        and isinstance(written, str)
        and bool(_SURROGATE.search(written))
        and _ok(item.upstream)
        and item.ours["code"] == "FS_NOT_TEXT"
        and item.ours["text"] == f'Error: cannot {item.name} "{display}": invalid UTF-8 text'
    )


def _half_pair_not_matched(item: StepItem) -> bool:
    old = item.arg("old_string")
    return (
        item.name == "edit"
        and isinstance(old, str)
        and bool(_SURROGATE.search(old))
        and _ok(item.upstream)
        and item.ours["code"] == "FS_EDIT_NOT_FOUND"
        # The first line, then (SPEC §8.2) the diagnosis: nothing in the file is close.
        and item.ours["text"].split("\n", 1)[0]
        == f'Error: old_string was not found in "{_display(item)}"'
    )


def _nul_binary(item: StepItem) -> bool:
    data = _content_at(item)
    return (
        item.name == "read"
        and data is not None
        and b"\x00" not in data[:UPSTREAM_NUL_SNIFF]
        and b"\x00" in data
        and _ok(item.upstream)
        and item.ours["code"] == "FS_NOT_TEXT"
        and item.ours["text"] == f'Error: cannot read "{_display(item)}": binary file'
    )


def _utf16_text(item: StepItem) -> bool:
    """A UTF-16 file with a BOM: upstream refuses it as binary, dsh-fs reads it as text
    (SPEC §12) and answers as for any text file."""
    data = _content_at(item)
    return (
        data is not None
        and data[:2] in (b"\xff\xfe", b"\xfe\xff")
        and item.upstream["code"] == "FS_NOT_TEXT"
        and item.ours["code"] != "FS_NOT_TEXT"
    )


def _edit_diagnosis(item: StepItem) -> bool:
    """A missed or ambiguous edit: the same code and first line, then our diagnosis."""
    upstream, ours = item.upstream, item.ours
    return (
        upstream["code"] == ours["code"]
        and ours["code"] in ("FS_EDIT_NOT_FOUND", "FS_AMBIGUOUS_EDIT")
        and ours["text"].startswith(upstream["text"] + "\n")
    )


def _edit_endings_read(item: StepItem) -> bool:
    """A read after a successful edit, the two texts equal but for CR and BOM characters."""
    if item.name != "read" or not (_ok(item.upstream) and _ok(item.ours)):
        return False
    earlier_edit = any(
        step.get("name") == "edit"
        and _ok(item.upstream_result["steps"][i])
        and _ok(item.our_result["steps"][i])
        for i, step in enumerate(item.case["steps"][: item.index])
    )

    def strip(text: str) -> str:
        return text.replace("\r", "").replace("\ufeff", "")

    return earlier_edit and strip(item.upstream["text"]) == strip(item.ours["text"])


def _cut_before_pair(item: StepItem) -> bool:
    if item.name != "read" or not (_ok(item.upstream) and _ok(item.ours)):
        return False
    data = _content_at(item)
    if data is None:
        return False
    offset = _int_value(item.arg("offset")) or 1
    limit = _int_value(item.arg("limit")) or 2000
    first = item.upstream["text"].split("\n", 1)[0]
    display = first.removeprefix("<path>").removesuffix("</path>")
    halves = render_read(display, data, offset, limit, "utf16")
    whole = render_read(display, data, offset, limit, "utf16-pair")
    return (
        halves is not None
        and halves != whole
        and item.upstream["text"] == halves
        and item.ours["text"] == whole
    )


def _metadata_version(item: StepItem) -> bool:
    if item.upstream["code"] != "FS_STALE_VERSION" or not _ok(item.ours):
        return False
    path = item.arg("file_path")
    last = None
    for step in item.case["steps"][: item.index]:
        if step["op"] != "call" and step.get("path") == f"work/{path}":
            last = step
    if last is None:
        return False
    if last["op"] == "touch":
        return True
    initial = _initial_bytes(item.case, str(path))
    return last["op"] == "put" and base64.b64decode(last.get("b64", "")) == initial


def _not_text_observed(item: StepItem) -> bool:
    """A write, delete or move of a file an earlier read of this case refused as not text:
    upstream still asks for a read, dsh-fs takes the refusal as the observation."""
    if item.upstream["code"] != "FS_NOT_OBSERVED" or not _ok(item.ours):
        return False
    path = item.arg("file_path") or item.arg("source_path")
    return any(
        step.get("name") == "read"
        and (parse_args(step.get("args", "")) or {}).get("file_path") == path
        and ours is not None
        and ours["code"] == "FS_NOT_TEXT"
        for step, ours in zip(
            item.case["steps"][: item.index], item.our_result["steps"][: item.index], strict=True
        )
    )


_NODE_ERRORS = {
    # Node's code → (dsh-fs's code, dsh-fs's wording after `cannot <verb> "<p>": `)
    "ELOOP": ("FS_NOT_FOUND", "too many levels of symbolic links"),
    "ENAMETOOLONG": ("FS_IO_ERROR", "file name too long"),
}


def _raw_node_error(item: StepItem) -> bool:
    match = re.match(r"Error: (E[A-Z]+): ", item.upstream["text"])
    if item.upstream["code"] is not None or match is None or match[1] not in _NODE_ERRORS:
        return False
    code, wording = _NODE_ERRORS[match[1]]
    expected = f'Error: cannot {item.name} "{_display(item)}": {wording}'
    return item.ours["code"] == code and item.ours["text"] == expected


# ---------------------------------------------------------------------------------------
# predicates over diverging paths
# ---------------------------------------------------------------------------------------


def _literal_edits(item: FileItem) -> bytes | None:
    """The file's bytes after the case's edits applied as plain byte replacements (what
    "only the replaced span changes" means), or None when that is not computable here: an
    edit's strings hold a line break (the replacement then takes the file's ending)."""
    rel = item.path.removeprefix("work/")
    data = _initial_bytes(item.case, rel)
    for _i, name, args in _calls(item.case):
        if _file_path(args) != rel:
            continue
        if name == "write":
            data = str(args["content"]).encode("utf-8", "surrogatepass")
        elif name == "edit" and data is not None:
            old, new = str(args["old_string"]), str(args["new_string"])
            if any(c in old + new for c in "\r\n"):
                return None
            count = -1 if args.get("replace_all") is True else 1
            data = data.replace(
                old.encode("utf-8", "surrogatepass"), new.encode("utf-8", "surrogatepass"), count
            )
    return data


def _file_endings(item: FileItem) -> bool:
    """Upstream's bytes differ from ours only in CR and BOM characters, and ours are exactly
    the literal replacement where that can be computed."""
    up, ours = _entry_bytes(item.upstream), _entry_bytes(item.ours)
    if up is None or ours is None or up == ours:
        return False
    if not any(name == "edit" for _i, name, _args in _calls(item.case)):
        return False
    a, b = _canonical_text(up), _canonical_text(ours)
    if a is None or a != b:
        return False
    expected = _literal_edits(item)
    return expected is None or ours == expected


def _file_mode(item: FileItem) -> bool:
    up, ours = item.upstream, item.ours
    if up is None or ours is None or up["type"] != "file" or ours["type"] != "file":
        return False
    same = all(up.get(k) == ours.get(k) for k in ("b64", "sha256", "size"))
    return same and up.get("mode") == 0o600 and ours.get("mode") == 0o666 & ~_umask()


def _file_dangling(item: FileItem) -> bool:
    """The link stays a link to its target, and the target holds what upstream put in the
    link's place (with the mode of a new file)."""
    links = {
        step["path"]: step.get("target", "")
        for step in item.case["files"]
        if step["op"] == "symlink"
    }
    for link, target in links.items():
        made = posixpath.join(posixpath.dirname(link), target)
        if item.path == link:
            return (
                item.upstream is not None
                and item.upstream["type"] == "file"
                and item.ours == {"type": "symlink", "target": target}
            )
        if item.path == made and item.upstream is None and item.ours is not None:
            return True
    return False


def _file_surrogate_name(item: FileItem) -> bool:
    """Upstream created the file under a name with U+FFFD for the lone surrogate; dsh-fs
    refused the path, so there is no such file."""
    paths = [_file_path(args) or "" for _i, _name, args in _calls(item.case)]
    return (
        item.ours is None
        and item.upstream is not None
        and any(
            _SURROGATE.search(p) and item.path == "work/" + _SURROGATE.sub("\ufffd", p)
            for p in paths
        )
    )


def _tool_added(item: StepItem) -> bool:
    """A tool dsh-fs has and upstream does not (SPEC §10): upstream's unknown-tool answer."""
    return item.name in ("move", "delete", "mkdir") and item.upstream["code"] == "UNKNOWN_TOOL"


CLASSES: list[CauseClass] = [
    CauseClass(
        "tool-added",
        "A tool upstream does not have",
        "`move`, `delete` and `mkdir` are dsh-fs tools (SPEC §10, for hosts without a shell); "
        "upstream answers `unknown tool`, dsh-fs runs the tool (here: `delete requires "
        'reading "a.txt" first`, FS_NOT_OBSERVED).',
        step=_tool_added,
    ),
    CauseClass(
        "value-check-code",
        "Same text; upstream has no code, dsh-fs says INVALID_ARGS",
        "Upstream's value checks after the schema (`file_path must be a non-empty string`, "
        "also for a path of only white space; `offset/limit must be a positive integer`; "
        "`limit must be less than or equal to 2000`; `old_string must be a non-empty "
        "string`; `old_string and new_string must differ`) throw a plain Error, and its "
        "runtime's lossless-JSON check (`tool execution arguments must be losslessly "
        "JSON-serializable`, for `-0`, `-0.0`, `1e400` anywhere in the arguments) a "
        "TypeError: the result has no code. dsh-fs gives the same text with the code "
        "INVALID_ARGS, so one code means one thing (issue 16 asks for it).",
        step=_value_check_code,
    ),
    CauseClass(
        "extra-args-refused",
        "Unknown extra arguments",
        "Upstream's parameter schema is an open object: undeclared keys are ignored (so "
        "`edit` with `dry_run: true` edits), and `sandbox_permissions`/`justification` reach "
        "its sandbox-escalation check on write and edit (`invalid escalation: …`). dsh-fs "
        'refuses every undeclared key: `invalid arguments: "foo" is not a declared property '
        "(additionalProperties: false)` (INVALID_ARGS), one clause per key, joined by `; `.",
        step=_extra_args,
    ),
    CauseClass(
        "nul-path-message",
        "A NUL byte in file_path",
        "Upstream passes the path to Node's fs, whose own TypeError text reaches the model "
        "(`The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
        "Received '<cwd>/a\\x00b.txt'`, no code). dsh-fs answers `cannot resolve \"a\\0b.txt\": "
        "the path contains a NUL byte` (FS_NOT_FOUND).",
        step=_nul_in_path,
    ),
    CauseClass(
        "lone-surrogate-in-path",
        "A lone surrogate in file_path",
        "Upstream encodes it as U+FFFD in the file name: a write creates `a\\ufffd.txt` while "
        "it displays `a\\ud800.txt`, a read says `not found` for the name it displays. dsh-fs "
        'refuses the path: `cannot resolve "a\\ud800.txt": the path contains a lone '
        "surrogate` (FS_NOT_FOUND), and creates nothing.",
        step=_surrogate_path,
        file=_file_surrogate_name,
    ),
    CauseClass(
        "lone-surrogate-refused",
        "A lone surrogate in content or new_string",
        "Upstream writes a lone UTF-16 surrogate as U+FFFD (EF BF BD), silently changing the "
        'text. dsh-fs refuses the call (FS_NOT_TEXT `cannot write/edit "<p>": invalid UTF-8 '
        "text`) and leaves the file unchanged.",
        step=_lone_surrogate_written,
    ),
    CauseClass(
        "half-pair-not-matched",
        "old_string that is half of a surrogate pair",
        "Upstream searches UTF-16 code units: `\\ud83d` matches the first half of 😀, and the "
        "edit then writes U+FFFD for the other half (corrupting the file). dsh-fs matches "
        'whole characters: `old_string was not found in "<p>"` (FS_EDIT_NOT_FOUND), the file '
        "unchanged. (Other lone surrogates are not found on both sides.)",
        step=_half_pair_not_matched,
    ),
    CauseClass(
        "utf16-bom-is-text",
        "A UTF-16 file with a BOM is text",
        "Upstream refuses a UTF-16 file as binary (its NUL bytes); dsh-fs recognises the BOM "
        "(SPEC §12): read shows the decoded lines, edit matches the decoded text and changes "
        "only the replaced span's bytes, in UTF-16, keeping the BOM.",
        step=_utf16_text,
    ),
    CauseClass(
        "nul-anywhere-binary",
        "A NUL byte past the first 8 KiB",
        "Upstream's read sniffs only the first 8192 bytes for NUL (its edit checks the whole "
        'file); dsh-fs treats a NUL anywhere as binary for every tool: `cannot read "<p>": '
        "binary file` (FS_NOT_TEXT).",
        step=_nul_binary,
    ),
    CauseClass(
        "edit-keeps-endings-and-bom",
        "An edit keeps each line's own ending and the BOM",
        "Upstream's edit decodes with a BOM-stripping decoder, normalizes CRLF to LF and "
        "writes the whole file back with the majority ending of its first 4 KiB (losing "
        "the BOM, rewriting minority endings, and turning `\\r\\r\\n` into `\\r\\n`). dsh-fs "
        "changes only the replaced span. Same text but for CR/BOM characters.",
        step=_edit_endings_read,
        file=_file_endings,
    ),
    CauseClass(
        "cut-before-surrogate-pair",
        "A line cut that would split a surrogate pair",
        "Both sides cut a long line at 2000 UTF-16 code units. Where the 2000th unit is the "
        "first half of a pair (an emoji, CJK Extension B), upstream's `substring` emits that "
        "lone half (`\\ud83d... (line truncated to 2000 chars)`); dsh-fs cuts before the "
        "pair (1999 units). Proven per item by the read-window model (simulate.py): "
        "upstream's text equals it in `utf16` mode and ours in `utf16-pair` mode.",
        step=_cut_before_pair,
    ),
    CauseClass(
        "edit-diagnosis",
        "Our diagnosis after a missed or ambiguous edit's message",
        "dsh-fs keeps upstream's first line for FS_EDIT_NOT_FOUND and FS_AMBIGUOUS_EDIT and "
        "adds a diagnosis after it (SPEC §8.2): the closest lines and why they differ, or "
        "that nothing is close; the line where each match starts.",
        step=_edit_diagnosis,
    ),
    CauseClass(
        "version-ignores-metadata",
        "A touch or a same-bytes rewrite is not a change in dsh-fs",
        "Upstream's version is dev:ino:size:mtime:ctime, so after a read an mtime-only touch "
        "or a rewrite with identical bytes makes write/edit fail FS_STALE_VERSION. dsh-fs's "
        "versions are backed by a content digest: the content is what the model saw, and "
        "the call succeeds.",
        step=_metadata_version,
    ),
    CauseClass(
        "not-text-read-observes",
        "A file read refused as not text counts as read",
        "Upstream's read of a binary (or invalid UTF-8) file fails and records nothing, so a "
        "write, delete or move of it asks for a read first, and every read fails again: "
        "the model can never replace or remove the file. dsh-fs takes the refusal as the "
        "observation of the version it judged (confirmed by a second look at that version): "
        "the model was told what is there, and a file changed since is stale.",
        step=_not_text_observed,
    ),
    CauseClass(
        "raw-node-errors",
        "Symlink loops and over-long names",
        "Upstream lets Node's own error text through with no code (`ELOOP: too many symbolic "
        "links encountered, realpath '<p>'`, `ENAMETOOLONG: name too long, realpath '<p>'`). "
        'dsh-fs: `cannot <verb> "<p>": too many levels of symbolic links` (FS_NOT_FOUND) and '
        '`cannot <verb> "<p>": file name too long` (FS_IO_ERROR).',
        step=_raw_node_error,
    ),
    CauseClass(
        "new-file-mode",
        "The mode of a newly created file",
        "Upstream stages a new file with mode 0600 and publishes it as is (its README: an "
        "existing file's mode is preserved, new files default to 0600), so created files "
        "are private to the owner whatever the umask. dsh-fs stages privately too but "
        "publishes a new file with 0666 less the umask (0644 here), as editors and `open()` "
        "do. Same bytes.",
        file=_file_mode,
    ),
    CauseClass(
        "dangling-symlink-kept",
        "Writing through a dangling symlink",
        "Upstream resolves a dangling link to the link's own path and renames the new file "
        "over it: the symlink becomes a regular file. dsh-fs writes through the link (creates "
        "its target) and keeps the link, as SPEC §3 says for writes through a symlink.",
        file=_file_dangling,
    ),
]

_BY_ID = {cls.id: cls for cls in CLASSES}


def classify_step(item: StepItem) -> str:
    """The class of a diverging call (not yet checked for cascade)."""
    for cls in CLASSES:
        if cls.step is not None and cls.step(item):
            return cls.id
    return UNCLASSIFIED


def classify_file(item: FileItem) -> str:
    """The class of a diverging path (not yet checked for cascade)."""
    for cls in CLASSES:
        if cls.file is not None and cls.file(item):
            return cls.id
    return UNCLASSIFIED


def title(class_id: str) -> str:
    """The class's title (or the id itself for cascade/unclassified)."""
    cls = _BY_ID.get(class_id)
    return cls.title if cls else class_id
