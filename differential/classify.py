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
import pwd
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
# JavaScript's String.prototype.trim() white space and line terminators
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class RawInt(str):
    """An integer token of the arguments' JSON text, as written."""


class RawFloat(str):
    """A fraction/exponent token of the arguments' JSON text, as written."""


def parse_args(text: str) -> Any:
    """The arguments with every number kept as its JSON token (`RawInt`/`RawFloat`)."""
    return json.loads(text, parse_int=RawInt, parse_float=RawFloat)


def _numbers(value: Any) -> list[str]:
    if isinstance(value, (RawInt, RawFloat)):
        return [value]
    if isinstance(value, dict):
        return [token for item in value.values() for token in _numbers(item)]
    if isinstance(value, list):
        return [token for item in value for token in _numbers(item)]
    return []


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


def _expands_tilde(path: str) -> bool:
    if path == "~" or path.startswith("~/"):
        return True
    if not path.startswith("~"):
        return False
    user = path[1:].split("/", 1)[0]
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


# ---------------------------------------------------------------------------------------
# predicates over diverging calls
# ---------------------------------------------------------------------------------------


def _lossless(item: StepItem) -> bool:
    tokens = _numbers(item.args)
    return item.upstream["text"].endswith("arguments must be losslessly JSON-serializable") and any(
        (t.startswith("-") and float(t) == 0) or abs(float(t)) == float("inf") for t in tokens
    )


def _extra_args(item: StepItem) -> bool:
    args = item.args
    keys = SCHEMA_KEYS.get(item.name)
    return (
        keys is not None
        and isinstance(args, dict)
        and bool(set(args) - keys)
        and 'unexpected argument "' in item.ours["text"]
    )


def _lone_surrogate_written(item: StepItem) -> bool:
    written = item.arg("content") if item.name == "write" else item.arg("new_string")
    return (
        item.name in {"write", "edit"}
        and isinstance(written, str)
        and bool(_SURROGATE.search(written))
        and _ok(item.upstream)
        and item.ours["is_error"]
    )


def _nul_in_path(item: StepItem) -> bool:
    path = item.arg("file_path")
    return isinstance(path, str) and "\x00" in path and item.upstream["is_error"]


def _nul_binary(item: StepItem) -> bool:
    return (
        item.name == "read"
        and _ok(item.upstream)
        and item.ours["code"] == "FS_NOT_TEXT"
        and item.ours["text"].endswith(": binary file")
    )


def _sandbox_remedy(item: StepItem) -> bool:
    return item.upstream["code"] == item.ours["code"] == "FS_SANDBOX_DENIED"


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


def _line_cap_utf16(item: StepItem) -> bool:
    if item.name != "read" or not (_ok(item.upstream) and _ok(item.ours)):
        return False
    data = _content_at(item)
    if data is None:
        return False
    offset = _int_value(item.arg("offset")) or 1
    limit = _int_value(item.arg("limit")) or 2000
    first = item.upstream["text"].split("\n", 1)[0]
    display = first.removeprefix("<path>").removesuffix("</path>")
    utf16 = render_read(display, data, offset, limit, "utf16")
    codepoints = render_read(display, data, offset, limit, "codepoints")
    return (
        utf16 is not None
        and utf16 != codepoints
        and item.upstream["text"] == utf16
        and item.ours["text"] == codepoints
    )


def _tilde(item: StepItem) -> bool:
    path = item.arg("file_path")
    return isinstance(path, str) and _expands_tilde(path)


def _whole_float(item: StepItem) -> bool:
    for key in ("offset", "limit"):
        value = item.arg(key)
        if isinstance(value, RawFloat) and float(value).is_integer() and float(value) >= 1:
            return item.ours["text"] == f"Error: {key} must be a positive integer"
    return False


def _beyond_int64(item: StepItem) -> bool:
    value = item.arg("offset")
    return (
        isinstance(value, RawInt)
        and int(value) > 2**63 - 1
        and "must be less than or equal to 9223372036854775807" in item.ours["text"]
    )


def _double_precision(item: StepItem) -> bool:
    value = item.arg("offset")
    if not isinstance(value, RawInt) or abs(int(value)) <= 2**53:
        return False
    rounded = int(float(value))
    return rounded != int(value) and str(rounded) in item.upstream["text"]


def _value_check_code(item: StepItem) -> bool:
    return (
        item.upstream["is_error"]
        and item.ours["is_error"]
        and item.upstream["text"] == item.ours["text"]
        and item.upstream["code"] is None
        and item.ours["code"] is not None
    )


def _schema_wording(item: StepItem) -> bool:
    return (
        item.upstream["code"] == "INVALID_ARGS"
        and item.upstream["text"].startswith("Error: invalid arguments: ")
        and '"arguments" must be an object' not in item.upstream["text"]
    )


def _not_object(item: StepItem) -> bool:
    return item.upstream["text"] == 'Error: invalid arguments: "arguments" must be an object'


def _unknown_tool(item: StepItem) -> bool:
    return item.upstream["code"] == "UNKNOWN_TOOL"


def _whitespace_path(item: StepItem) -> bool:
    path = item.arg("file_path")
    return (
        isinstance(path, str)
        and path != ""
        and path.strip(_JS_SPACE) == ""
        and item.upstream["text"] == "Error: file_path must be a non-empty string"
    )


def _edit_missing_wording(item: StepItem) -> bool:
    return (
        item.upstream["code"] == item.ours["code"] == "FS_STALE_VERSION"
        and "file changed since it was read" in item.upstream["text"]
        and "file no longer exists" in item.ours["text"]
    )


def _metadata_version(item: StepItem) -> bool:
    if item.upstream["code"] != "FS_STALE_VERSION" or item.ours["is_error"]:
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


def _parent_not_directory(item: StepItem) -> bool:
    return "a parent path segment is not a directory" in item.upstream["text"]


def _raw_node_error(item: StepItem) -> bool:
    return item.upstream["code"] is None and bool(
        re.match(r"Error: E[A-Z]+: ", item.upstream["text"])
    )


def _surrogate_path(item: StepItem) -> bool:
    path = item.arg("file_path")
    return isinstance(path, str) and bool(_SURROGATE.search(path))


def _surrogate_old(item: StepItem) -> bool:
    old = item.arg("old_string")
    return item.name == "edit" and isinstance(old, str) and bool(_SURROGATE.search(old))


def _bom_matchable(item: StepItem) -> bool:
    old = item.arg("old_string")
    return (
        item.name == "edit"
        and isinstance(old, str)
        and "\ufeff" in old
        and item.upstream["code"] == "FS_EDIT_NOT_FOUND"
        and _ok(item.ours)
    )


# ---------------------------------------------------------------------------------------
# predicates over diverging paths
# ---------------------------------------------------------------------------------------


def _file_endings(item: FileItem) -> bool:
    up, ours = _entry_bytes(item.upstream), _entry_bytes(item.ours)
    if up is None or ours is None or up == ours:
        return False
    if not any(name == "edit" for _i, name, _args in _calls(item.case)):
        return False
    a, b = _canonical_text(up), _canonical_text(ours)
    return a is not None and a == b


def _file_mode(item: FileItem) -> bool:
    up, ours = item.upstream, item.ours
    if up is None or ours is None or up["type"] != "file" or ours["type"] != "file":
        return False
    same = all(up.get(k) == ours.get(k) for k in ("b64", "sha256", "size"))
    return same and up.get("mode") == 0o600 and ours.get("mode") != 0o600


def _file_dangling(item: FileItem) -> bool:
    links = {
        step["path"]: step.get("target", "")
        for step in item.case["files"]
        if step["op"] == "symlink"
    }
    for link, target in links.items():
        made = link.rsplit("/", 1)[0] + "/" + target
        if item.path == link and item.upstream is not None and item.upstream["type"] == "file":
            return item.ours is not None and item.ours["type"] == "symlink"
        if item.path == made and item.upstream is None and item.ours is not None:
            return True
    return False


def _file_tilde(item: FileItem) -> bool:
    paths = [_file_path(args) or "" for _i, _name, args in _calls(item.case)]
    return any(_expands_tilde(p) for p in paths) and (
        item.path.startswith("home/") or item.path.startswith("work/~")
    )


CLASSES: list[CauseClass] = [
    # -- the deliberate differences (see decisions.json) come first where they overlap --
    CauseClass(
        "lossless-json-check",
        "A negative zero or an overflowing number anywhere in the arguments",
        "Upstream's tool runtime snapshots the arguments as lossless JSON before anything "
        "else (packages/core/tools `createExecution` → `snapshotJsonValue`); `-0`, `-0.0` "
        "and numbers that overflow to infinity (`1e400`) are not lossless, so the call "
        "fails with `tool execution arguments must be losslessly JSON-serializable` and no "
        "code — even for an unknown tool or in an unknown extra argument. dsh-fs parses them "
        "as numbers and judges them like any other value.",
        step=_lossless,
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
        "extra-args-refused",
        "Unknown extra arguments",
        "Upstream's parameter schema is an open object: undeclared keys are ignored (and "
        "`sandbox_permissions`/`justification` reach its sandbox-escalation check on write "
        'and edit: `invalid escalation: …`). dsh-fs refuses them: `unexpected argument "foo"`.',
        step=_extra_args,
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
        "edit-diagnosis",
        "Our diagnosis after a missed or ambiguous edit's message",
        "dsh-fs keeps upstream's first line for FS_EDIT_NOT_FOUND and FS_AMBIGUOUS_EDIT and "
        "adds a diagnosis after it (SPEC §8.2): the closest lines and why they differ, or "
        "that nothing is close; the line where each match starts.",
        step=_edit_diagnosis,
    ),
    CauseClass(
        "sandbox-denied-remedy",
        "Our remedy appended to FS_SANDBOX_DENIED",
        "dsh-fs appends a recovery hint to FS_SANDBOX_DENIED (upstream: the `[sandbox: …]` "
        "marker). The local stack never raises it; listed for completeness.",
        step=_sandbox_remedy,
    ),
    # -- undocumented --
    CauseClass(
        "line-cap-utf16",
        "The 2000-character line cap counts UTF-16 code units upstream",
        "Upstream truncates with JavaScript `line.length`/`substring(0, 2000)`, i.e. UTF-16 "
        "code units: an astral character (emoji, CJK Extension B) counts 2, a line of 1001 "
        "emoji is cut to 1000, and a cut between the two halves of a pair emits a lone "
        "surrogate (`\\ud83d... (line truncated to 2000 chars)`). dsh-fs counts code points. "
        "Every item here is proven by the read-window model (simulate.py): upstream's text "
        "equals the model in UTF-16 mode and ours equals it in code-point mode; the byte cap "
        "then differs as a consequence (7 lines of 2000 emoji fit upstream, not in ours).",
        step=_line_cap_utf16,
    ),
    CauseClass(
        "tilde-literal",
        "`~` in file_path",
        "Upstream resolves `~`, `~/x` and `~user/x` literally against the working directory "
        "(`<cwd>/~/x`, creating a folder named `~`); dsh-fs expands them to the home "
        "directory (`<home>/x`, `/root/x`).",
        step=_tilde,
        file=_file_tilde,
    ),
    CauseClass(
        "whole-float-accepted",
        "Whole floats for offset/limit (2.0, 1e3, 2E0)",
        "JSON `2.0` and `1e3` are JavaScript numbers equal to integers, so upstream accepts "
        "them (`Number.isInteger(2.0)`), including `1e21` (then `offset 1e+21 is out of "
        "range …` / `limit must be less than or equal to 2000`). dsh-fs parses them as "
        "Python floats and refuses: `offset must be a positive integer`.",
        step=_whole_float,
    ),
    CauseClass(
        "offset-beyond-int64",
        "An integer offset above 2^63-1",
        "Upstream accepts any integral number and reports the out-of-range offset "
        '(`offset 100000000000000000000 is out of range for "<p>" (5 lines)`, FS_NOT_FOUND; '
        "JavaScript prints 10^21 and above as `1e+21`). dsh-fs refuses with `offset must be "
        "less than or equal to 9223372036854775807` (TOOL_INVALID_ARGUMENTS).",
        step=_beyond_int64,
    ),
    CauseClass(
        "js-double-precision",
        "Integers above 2^53 are rounded upstream",
        "JSON.parse turns 9007199254740993 into the double 9007199254740992, which upstream "
        "echoes in its message; dsh-fs keeps the exact integer.",
        step=_double_precision,
    ),
    CauseClass(
        "arguments-not-object",
        "Arguments that are not a JSON object",
        'Upstream: `invalid arguments: "arguments" must be an object` (INVALID_ARGS); dsh-fs: '
        "`arguments must be a JSON object` (TOOL_INVALID_ARGUMENTS).",
        step=_not_object,
    ),
    CauseClass(
        "unknown-tool-code",
        "The code of an unknown tool",
        'Same text (`unknown tool "x"`); upstream\'s code is UNKNOWN_TOOL, ours TOOL_NOT_FOUND.',
        step=_unknown_tool,
    ),
    CauseClass(
        "whitespace-path",
        "A whitespace-only file_path",
        "Upstream checks `file_path.trim().length === 0` (JavaScript white space: space, tab, "
        "newline, U+00A0, U+3000, …) and fails with `file_path must be a non-empty string` "
        "(no code). dsh-fs only refuses the empty string: it reads `<cwd>/ ` (not found), "
        "creates a file named ` `, or reports a stale edit.",
        step=_whitespace_path,
    ),
    CauseClass(
        "schema-error-wording",
        "Wrong types and missing arguments",
        "Upstream reports JSON-schema violations, all of them, joined by `; `, in schema "
        "order (missing required properties first, then each present property's type), "
        "prefixed once with `invalid arguments: ` and coded INVALID_ARGS: `invalid arguments: "
        '"offset" must be a number`, `invalid arguments: missing required property '
        '"file_path"`. dsh-fs uses its own sentences (`offset must be a positive integer`, '
        "`file_path must be a non-empty string` for a missing path) and "
        "TOOL_INVALID_ARGUMENTS. See the exact list below.",
        step=_schema_wording,
    ),
    CauseClass(
        "value-check-code",
        "Value checks: same text, different code",
        "Upstream's value checks after the schema (`file_path must be a non-empty string`, "
        "`offset/limit must be a positive integer`, `limit must be less than or equal to "
        "2000`, `old_string must be a non-empty string`, `old_string and new_string must "
        "differ`) throw a plain Error: the result has no code. dsh-fs codes them "
        "TOOL_INVALID_ARGUMENTS.",
        step=_value_check_code,
    ),
    CauseClass(
        "edit-missing-wording",
        "Editing a file that does not exist",
        'Both FS_STALE_VERSION; upstream says `cannot edit "<p>": file changed since it was '
        "read — re-read the file, then retry` for a missing file too, dsh-fs says `cannot "
        'edit "<p>": file no longer exists — re-read the file, then retry`.',
        step=_edit_missing_wording,
    ),
    CauseClass(
        "version-ignores-metadata",
        "A touch or a same-bytes rewrite is not a change in dsh-fs",
        "Upstream's version is dev:ino:size:mtime:ctime, so after a read an mtime-only touch "
        "or a rewrite with identical bytes makes write/edit fail FS_STALE_VERSION. dsh-fs's "
        "version ignores those (the content is what the model saw) and the call succeeds.",
        step=_metadata_version,
    ),
    CauseClass(
        "parent-not-directory",
        "A path through a regular file (`a.txt/child`)",
        'Upstream: `cannot resolve "<p>": a parent path segment is not a directory` '
        '(FS_NOT_FOUND) for all three tools. dsh-fs: `cannot read/write "<p>": not a '
        "directory` (FS_NOT_DIRECTORY), and for edit `file no longer exists` "
        "(FS_STALE_VERSION).",
        step=_parent_not_directory,
    ),
    CauseClass(
        "raw-node-errors",
        "Symlink loops and over-long names",
        "Upstream lets Node's own error text through with no code (`ELOOP: too many symbolic "
        "links encountered, realpath '<p>'`, `ENAMETOOLONG: name too long, realpath '<p>'`). "
        'dsh-fs: `cannot read "<p>": too many levels of symbolic links` (FS_NOT_FOUND), '
        '`cannot read "<p>": …` (FS_IO_ERROR).',
        step=_raw_node_error,
    ),
    CauseClass(
        "lone-surrogate-in-path",
        "A lone surrogate in file_path",
        "Upstream encodes it as U+FFFD in the file name (a write creates `a\\ufffd.txt` and "
        "displays `a\\ud800.txt`). dsh-fs refuses with a misleading `file_path must be a "
        "non-empty string`.",
        step=_surrogate_path,
    ),
    CauseClass(
        "lone-surrogate-in-old-string",
        "A lone surrogate in old_string",
        "Upstream searches UTF-16 code units: a lone surrogate is usually not found "
        "(FS_EDIT_NOT_FOUND) but `\\ud83d` matches half of an emoji and the edit then writes "
        "U+FFFD for the other half (corrupting the file). dsh-fs refuses with a misleading "
        "`old_string must be a non-empty string`.",
        step=_surrogate_old,
    ),
    CauseClass(
        "bom-matchable-by-edit",
        "old_string containing the BOM",
        "Upstream's edit never sees the BOM (stripped at decode), so an old_string with "
        "U+FEFF at the start of a BOM file is not found. dsh-fs's edit matches the BOM, "
        "although its read hides it: `\\ufeffhello` is replaced.",
        step=_bom_matchable,
    ),
    CauseClass(
        "new-file-mode",
        "The mode of a newly created file",
        "Upstream stages a new file with mode 0600 and publishes it as is (it only restores "
        "the mode of an existing file), so created files are 0600. dsh-fs creates them 0666 "
        "minus the umask (0644 here). Same bytes.",
        file=_file_mode,
    ),
    CauseClass(
        "dangling-symlink-replaced",
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
