"""What the model sees where dsh-fs matches upstream (DeepSeek Harness) byte for byte, and
where it differs on purpose (docs/differences.md), pinned in one place.

Each call goes through a real workspace (local and sandbox) on the real disk; the arguments
are JSON text parsed as the OpenAI adapter and the MCP transport parse them (`parse_json`),
so ``2.0``, ``1e21``, ``-0`` and ``"\\ud800"`` arrive as they would from a model. The texts
match upstream's recorded answers (`make differential`) except in the "ours" snapshots,
whose upstream answer is quoted beside them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dsh_fs import ToolResult, Workspace
from dsh_fs.runtime import parse_json

pytestmark = pytest.mark.anyio

WorkspaceFactory = Callable[..., Workspace]  # the `make_workspace` fixture (conftest.py)

EMOJI = "\U0001f600"  # two UTF-16 code units
CUT = "... (line truncated to 2000 chars)"
STALE_REMEDY = " \u2014 re-read the file, then retry"


def block(path: str, body: str) -> str:
    return f"<path><root>/{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


FILES: dict[str, bytes] = {
    "a.txt": b"hello\n",
    "bom.txt": b"\xef\xbb\xbfhello\r\nworld\n",
    "pair.txt": f"pair {EMOJI}\n".encode(),
    "emoji-1001.txt": (EMOJI * 1001 + "\n").encode(),
    "split-pair.txt": ("a" + EMOJI * 1500 + "\n").encode(),
    "nul-late.txt": b"a" * 9000 + b"\n\x00\n",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One call and the exact answer."""

    tool: str
    """The tool called."""
    args: str
    """Its arguments, as JSON text."""
    code: str | None
    """The result's code (None for a success)."""
    text: str
    """The exact text, with ``<root>`` for the workspace directory."""
    read_first: str | None = None
    """A path the session reads first (an edit under the policy needs it)."""


SAME_AS_UPSTREAM: dict[str, Snapshot] = {
    # arguments: upstream's schema sentences and codes
    "read-offset-not-a-number": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "offset": "2"}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: "offset" must be a number',
    ),
    "read-missing-file-path": Snapshot(
        tool="read",
        args="{}",
        code="INVALID_ARGS",
        text='Error: invalid arguments: missing required property "file_path"',
    ),
    "read-every-type-error-in-schema-order": Snapshot(
        tool="read",
        args='{"file_path": 7, "offset": "x", "limit": false}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: "file_path" must be a string; "offset" must be a '
        'number; "limit" must be a number',
    ),
    "write-missing-before-type-errors": Snapshot(
        tool="write",
        args='{"file_path": 7}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: missing required property "content"; "file_path" '
        "must be a string",
    ),
    "edit-missing-new-string": Snapshot(
        tool="edit",
        args='{"file_path": "a.txt", "old_string": "hello"}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: missing required property "new_string"',
    ),
    "edit-replace-all-not-a-boolean": Snapshot(
        tool="edit",
        args='{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "true"}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: "replace_all" must be a boolean',
    ),
    "arguments-not-an-object": Snapshot(
        tool="write",
        args="[]",
        code="INVALID_ARGS",
        text='Error: invalid arguments: "arguments" must be an object',
    ),
    "unknown-tool": Snapshot(
        tool="delete", args="{}", code="UNKNOWN_TOOL", text='Error: unknown tool "delete"'
    ),
    # numbers as JavaScript has them
    "whole-floats-are-integers": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "offset": 1.0, "limit": 1e0}',
        code=None,
        text=block("a.txt", "1: hello\n\n(End of file - total 1 lines)"),
    ),
    "offset-printed-as-javascript-prints-it": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "offset": 1e21}',
        code="FS_NOT_FOUND",
        text='Error: offset 1e+21 is out of range for "<root>/a.txt" (1 lines)',
    ),
    "offset-rounded-to-a-double": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "offset": 9007199254740993}',
        code="FS_NOT_FOUND",
        text='Error: offset 9007199254740992 is out of range for "<root>/a.txt" (1 lines)',
    ),
    # the line cap counts UTF-16 code units: an emoji counts 2
    "utf16-cut-of-astral-characters": Snapshot(
        tool="read",
        args='{"file_path": "emoji-1001.txt"}',
        code=None,
        text=block("emoji-1001.txt", f"1: {EMOJI * 1000}{CUT}\n\n(End of file - total 1 lines)"),
    ),
    # `~` is an ordinary path component
    "tilde-is-literal": Snapshot(
        tool="read",
        args='{"file_path": "~/a.txt"}',
        code="FS_NOT_FOUND",
        text='Error: cannot read "<root>/~/a.txt": not found',
    ),
    # a BOM is not text: read hides it, edit cannot match it
    "bom-hidden-from-read": Snapshot(
        tool="read",
        args='{"file_path": "bom.txt"}',
        code=None,
        text=block("bom.txt", "1: hello\n2: world\n\n(End of file - total 2 lines)"),
    ),
    "bom-not-matchable": Snapshot(
        tool="edit",
        args='{"file_path": "bom.txt", "old_string": "\\ufeffhello", "new_string": "x"}',
        code="FS_EDIT_NOT_FOUND",
        # Upstream's first line; the diagnosis after it is ours (SPEC §8.2).
        text='Error: old_string was not found in "<root>/bom.txt"\n'
        "The closest text in the file is at line 1; it differs from old_string:\n"
        "- look-alike characters: line 1, column 1 has nothing in the file where old_string "
        "has U+FEFF ZERO WIDTH NO-BREAK SPACE, a byte order mark\n"
        "1: hello\n"
        'To edit these lines, copy old_string from them exactly, without the "<n>: " prefixes.',
        read_first="bom.txt",
    ),
    # paths
    "path-through-a-file-read": Snapshot(
        tool="read",
        args='{"file_path": "a.txt/x"}',
        code="FS_NOT_FOUND",
        text='Error: cannot resolve "<root>/a.txt/x": a parent path segment is not a directory',
    ),
    "path-through-a-file-edit-before-the-policy": Snapshot(
        tool="edit",
        args='{"file_path": "a.txt/x/y", "old_string": "a", "new_string": "b"}',
        code="FS_NOT_FOUND",
        text='Error: cannot resolve "<root>/a.txt/x/y": a parent path segment is not a directory',
    ),
    "blank-path": Snapshot(
        tool="write",
        args='{"file_path": " \\u3000", "content": "x"}',
        code="INVALID_ARGS",  # upstream: no code (see OURS)
        text="Error: file_path must be a non-empty string",
    ),
    "negative-zero-anywhere": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "limit": -0}',
        code="INVALID_ARGS",  # upstream: no code (see OURS)
        text="Error: tool execution arguments must be losslessly JSON-serializable",
    ),
}

OURS: dict[str, Snapshot] = {
    # upstream: the same text, no code
    "value-checks-carry-invalid-args": Snapshot(
        tool="read",
        args='{"file_path": "a.txt", "offset": 0}',
        code="INVALID_ARGS",
        text="Error: offset must be a positive integer",
    ),
    # upstream ignores the key (and edits)
    "extra-arguments-refused": Snapshot(
        tool="edit",
        args='{"file_path": "a.txt", "old_string": "hello", "new_string": "bye", "dry_run": true}',
        code="INVALID_ARGS",
        text='Error: invalid arguments: "dry_run" is not a declared property '
        "(additionalProperties: false)",
        read_first="a.txt",
    ),
    # upstream: Node's TypeError text ("The argument 'path' must be ... without null bytes")
    "nul-in-a-path": Snapshot(
        tool="read",
        args='{"file_path": "a\\u0000.txt"}',
        code="FS_NOT_FOUND",
        text='Error: cannot resolve "a\\0.txt": the path contains a NUL byte',
    ),
    # upstream: `not found` for a\ud800.txt, and a write creates a\ufffd.txt
    "lone-surrogate-in-a-path": Snapshot(
        tool="write",
        args='{"file_path": "a\\ud800.txt", "content": "x"}',
        code="FS_NOT_FOUND",
        text='Error: cannot resolve "a\\ud800.txt": the path contains a lone surrogate',
    ),
    # upstream writes U+FFFD
    "lone-surrogate-in-content": Snapshot(
        tool="write",
        args='{"file_path": "new.txt", "content": "a\\ud800b"}',
        code="FS_NOT_TEXT",
        text='Error: cannot write "<root>/new.txt": invalid UTF-8 text',
    ),
    # upstream matches the first half of the emoji and writes U+FFFD for the other half
    "half-a-pair-never-matches": Snapshot(
        tool="edit",
        args='{"file_path": "pair.txt", "old_string": "\\ud83d", "new_string": "x"}',
        code="FS_EDIT_NOT_FOUND",
        text='Error: old_string was not found in "<root>/pair.txt"\n'
        "Nothing in the file is close to old_string: read the file to find the text you meant "
        "to change, or check the path.",
        read_first="pair.txt",
    ),
    # upstream's read sniffs only the first 8 KiB and shows the file
    "nul-anywhere-is-binary": Snapshot(
        tool="read",
        args='{"file_path": "nul-late.txt"}',
        code="FS_NOT_TEXT",
        text='Error: cannot read "<root>/nul-late.txt": binary file',
    ),
    # upstream: "ELOOP: too many symbolic links encountered, realpath '<root>/loop'", no code
    "symlink-loop": Snapshot(
        tool="write",
        args='{"file_path": "loop", "content": "x"}',
        code="FS_NOT_FOUND",
        text='Error: cannot write "<root>/loop": too many levels of symbolic links',
    ),
    # upstream: "ENAMETOOLONG: name too long, realpath '<root>/nnn…'", no code
    "name-too-long": Snapshot(
        tool="read",
        args='{"file_path": "%s"}' % ("n" * 300),
        code="FS_IO_ERROR",
        text=f'Error: cannot read "<root>/{"n" * 300}": file name too long',
    ),
    # upstream cuts between the halves: "a" + 999 emoji + "\ud83d" + the notice
    "utf16-cut-before-a-surrogate-pair": Snapshot(
        tool="read",
        args='{"file_path": "split-pair.txt"}',
        code=None,
        text=block("split-pair.txt", f"1: a{EMOJI * 999}{CUT}\n\n(End of file - total 1 lines)"),
    ),
}


async def _call(workspace: Workspace, snapshot: Snapshot, root: Path) -> ToolResult:
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    (root / "loop").symlink_to("loop")
    session = workspace.session()
    if snapshot.read_first is not None:
        first = await session.call("read", {"file_path": snapshot.read_first})
        assert not first.is_error, first.text
    return await session.call(snapshot.tool, parse_json(snapshot.args))


@pytest.mark.parametrize("snapshot", SAME_AS_UPSTREAM.values(), ids=SAME_AS_UPSTREAM.keys())
async def test_the_model_sees_what_upstream_shows(
    make_workspace: WorkspaceFactory, root: Path, snapshot: Snapshot
) -> None:
    result = await _call(make_workspace(), snapshot, root)
    assert (result.code, result.text) == (snapshot.code, snapshot.text.replace("<root>", str(root)))
    assert result.is_error is (snapshot.code is not None)


@pytest.mark.parametrize("snapshot", OURS.values(), ids=OURS.keys())
async def test_the_model_sees_our_deliberate_answer(
    make_workspace: WorkspaceFactory, root: Path, snapshot: Snapshot
) -> None:
    result = await _call(make_workspace(), snapshot, root)
    assert (result.code, result.text) == (snapshot.code, snapshot.text.replace("<root>", str(root)))
    assert result.is_error is (snapshot.code is not None)
    for name, data in FILES.items():  # a refusal changes nothing
        assert (root / name).read_bytes() == data
    assert not (root / "new.txt").exists()
    assert sorted(os.listdir(root)) == sorted([*FILES, "loop"])


async def test_a_tilde_path_writes_under_the_workspace_not_home(
    root: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        created = await session.call("write", {"file_path": "~/notes.txt", "content": "x\n"})
        assert created.text == (
            f"<path>{root}/~/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n"
            "</content>"
        )
        edited = await session.call(
            "edit", {"file_path": "~/notes.txt", "old_string": "x", "new_string": "y"}
        )
        assert not edited.is_error, edited.text
        # `~` alone is the folder just made, not the home directory
        bare = await session.call("write", {"file_path": "~", "content": "tilde\n"})
        assert (bare.code, bare.text) == (
            "FS_NOT_REGULAR_FILE",
            f'Error: cannot write "{root}/~": not a regular file',
        )
    assert (root / "~" / "notes.txt").read_bytes() == b"y\n"
    assert list(home.iterdir()) == []


async def test_an_edit_of_a_bom_file_keeps_the_bom_and_each_lines_ending(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    """Upstream writes b"HELLO\\nworld\\n": no BOM, the CRLF rewritten."""
    snapshot = Snapshot(
        tool="edit",
        args='{"file_path": "bom.txt", "old_string": "hello", "new_string": "HELLO"}',
        code=None,
        text="",
        read_first="bom.txt",
    )
    result = await _call(make_workspace(), snapshot, root)
    assert result.text == f"The file {root}/bom.txt has been updated successfully."
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfHELLO\r\nworld\n"


async def test_a_path_through_a_file_outside_the_sandbox_is_denied_not_described(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside").resolve()
    (outside / "f.txt").write_text("secret\n", encoding="utf-8")
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        for tool, extra in (("read", {}), ("write", {"content": "x"})):
            result = await session.call(tool, {"file_path": f"{outside}/f.txt/x", **extra})
            assert result.code == "FS_SANDBOX_DENIED"
            assert "a parent path segment" not in result.text


async def test_a_new_file_gets_the_umask_mode_and_a_dangling_link_is_written_through(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    """Upstream: both files 0600, and ``link.txt`` replaced by a regular file."""
    (root / "link.txt").symlink_to("target.txt")
    session = make_workspace().session()
    for path in ("new.txt", "link.txt"):
        result = await session.call("write", {"file_path": path, "content": "x\n"})
        assert result.text.endswith("<content>\nCreated file\n</content>")
    mask = os.umask(0o022)
    os.umask(mask)
    for path in ("new.txt", "target.txt"):
        assert stat.S_IMODE((root / path).stat().st_mode) == 0o666 & ~mask
        assert (root / path).read_bytes() == b"x\n"
    assert os.readlink(root / "link.txt") == "target.txt"
