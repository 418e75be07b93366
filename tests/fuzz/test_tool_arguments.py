"""Hostile arguments: any JSON value for any argument of any tool is a structured result.

Hypothesis sends `read`, `write` and `edit` (and unknown tools) wrong types, huge and
non-finite numbers, NUL bytes, lone surrogates, very long strings, nested objects, unknown
and missing keys, and non-object arguments, through `Session.call` on a sandboxed
workspace. Every call must return a `ToolResult` within a few seconds — an error with a
code and ``Error: …`` text, never an exception and never an internal error — and nothing
outside the sandbox may change. The quick profile runs in the normal suite; ``make fuzz``
runs the long one (``HYPOTHESIS_PROFILE=fuzz``: 5000 examples per test).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dsh_fs import Session, Workspace
from dsh_fs.runtime import ToolResult

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 10
TOOLS = ("read", "write", "edit")
KEYS = ("file_path", "offset", "limit", "content", "old_string", "new_string", "replace_all")

# --- the sandbox and what must never change outside it -------------------------------------


class Arena:
    """A sandbox root with a few files and links, next to an outside folder with secrets."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "root"
        self.outside = base / "outside"
        self.root.mkdir()
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("secret\n", encoding="utf-8")
        (self.root / "a.txt").write_text("alpha\nbeta\nalpha\n", encoding="utf-8")
        (self.root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
        (self.root / "bin.dat").write_bytes(b"\0\1\2")
        (self.root / "sub").mkdir()
        (self.root / "sub" / "b.txt").write_text("bee\n", encoding="utf-8")
        (self.root / "link-out").symlink_to(self.outside / "secret.txt")
        (self.root / "dir-out").symlink_to(self.outside)
        (self.root / "dangling-out").symlink_to(self.outside / "new.txt")
        (self.root / "zero").symlink_to("/dev/zero")
        os.mkfifo(self.root / "fifo")
        self.before = self.snapshot_outside()

    def snapshot_outside(self) -> dict[str, object]:
        """Everything under `base` except the root: names, types, link targets, bytes."""
        seen: dict[str, object] = {}
        for dirpath, dirnames, filenames in os.walk(self.base):
            if Path(dirpath) == self.base:
                dirnames.remove("root")
            for name in dirnames + filenames:
                path = Path(dirpath, name)
                if path.is_symlink():
                    seen[str(path)] = ("link", os.readlink(path))
                elif path.is_file():
                    seen[str(path)] = ("file", path.read_bytes())
                else:
                    seen[str(path)] = ("other", path.stat().st_mode)
        return seen


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    arena = Arena(tmp_path_factory.mktemp("fuzz"))
    yield arena
    assert arena.snapshot_outside() == arena.before


# --- strategies ------------------------------------------------------------------------------

any_text = st.text(st.characters(exclude_categories=()), max_size=40)
"""Any code points, lone surrogates (category Cs) and NUL included."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Huge:
    """A stand-in for a very long string: `times` copies of `piece` joined by `separator`.

    Hypothesis's engine caches the results of its last 10,000 test cases, and each result
    records the value every draw returned (strings and numbers by strong reference), so
    drawing the strings themselves kept every megabyte drawn alive: gigabytes over the long
    profile's 5000 examples. An example holds only this stand-in; `expand` builds the string
    for the call alone, and a failure report prints `Huge(...)` instead of a megabyte.
    """

    piece: str
    """The repeated unit."""
    times: int
    """How many copies."""
    separator: str = ""
    """Between copies (not after the last)."""

    def text(self) -> str:
        """The string this stands for."""
        return (self.piece + self.separator) * (self.times - 1) + self.piece


def expand(value: object) -> object:
    """`value` with every `Huge` (in lists, dict keys and values) replaced by its string."""
    if isinstance(value, Huge):
        return value.text()
    if isinstance(value, list):
        return [expand(item) for item in value]
    if isinstance(value, dict):
        return {expand(key): expand(item) for key, item in value.items()}
    return value


long_strings = st.sampled_from(
    [Huge(piece="x", times=100_000), Huge(piece="x", times=1_000_000)]
) | st.just(Huge(piece="d", times=3000, separator="/"))
"""Contents of 100 kB and 1 MB and a path of 3000 components, drawn as stand-ins."""

special_strings = st.sampled_from(
    [
        "",
        "\0",
        "a.txt\0",
        "\ud800",
        "a\udc80.txt",
        "\ufeff",
        "../outside/secret.txt",
        "../outside/new.txt",
        "sub/../../outside/secret.txt",
        "/etc/passwd",
        "~/.dsh-fs-fuzz",
        "link-out",
        "dir-out/new.txt",
        "dangling-out",
        "zero",
        "/dev/zero",
        "fifo",
        "bin.dat",
        "sub",
        ".",
        "/",
        "a.txt",
        "crlf.txt",
        "sub/b.txt",
        "new.txt",
        "alpha\n",
        "alpha",
        "beta\r\n",
    ]
).__or__(long_strings)

huge_numbers = st.one_of(
    st.sampled_from([0, -1, 1, 2000, 2001, 2**31, 2**63 - 1, 2**63, -(2**63) - 1]),
    # More digits than Python will print (4300): built lazily, since a strategy's repr can't.
    st.integers(min_value=19, max_value=5000).map(lambda digits: 10**digits),
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    huge_numbers,
    st.floats(allow_nan=True, allow_infinity=True),
    any_text,
    special_strings,
)

json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(any_text, special_strings), inner)
    ),
    max_leaves=12,
)
"""Any JSON value (and NaN/infinity, which Python's json module also produces)."""

workspace_names = st.sampled_from(
    ["a.txt", "crlf.txt", "sub/b.txt", "new.txt", "sub/new.txt", "bin.dat", "fifo", "zero"]
)

plausible = {
    "file_path": st.one_of(workspace_names, workspace_names, workspace_names, special_strings),
    "offset": st.one_of(st.integers(min_value=1, max_value=5), huge_numbers),
    "limit": st.one_of(st.integers(min_value=1, max_value=2002), huge_numbers),
    "content": st.one_of(any_text, special_strings),
    "old_string": st.one_of(any_text, special_strings),
    "new_string": st.one_of(any_text, special_strings),
    "replace_all": st.booleans(),
}


TOOL_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "read": (("file_path",), ("offset", "limit")),
    "write": (("file_path", "content"), ()),
    "edit": (("file_path", "old_string", "new_string"), ("replace_all",)),
}
"""Per tool: (required keys, optional keys)."""


@st.composite
def calls_of_one_tool(draw: st.DrawFn) -> tuple[str, object]:
    """A call that mostly fits its tool, with hostile values, keys and shapes mixed in."""
    # Structure from a Random seeded by hypothesis: its own draws lean to boundary values.
    rng = draw(st.randoms(use_true_random=True))
    tool = rng.choice([*TOOLS, *TOOLS, *TOOLS, "unknown"])
    if rng.random() < 0.1:
        return tool, draw(json_values)  # any JSON value, object or not
    required, optional = TOOL_KEYS.get(tool, ((), KEYS))
    arguments: dict[str, Any] = {}
    for key in required + optional:
        if rng.random() < (0.95 if key in required else 0.4):
            hostile = rng.random() < 0.15
            arguments[key] = draw(json_values if hostile else plausible[key])
    if rng.random() < 0.1:
        extra = st.dictionaries(st.one_of(any_text, st.sampled_from(KEYS)), json_values, max_size=2)
        arguments.update(draw(extra))
    return tool, arguments


calls = st.lists(calls_of_one_tool(), min_size=1, max_size=4)
"""A short sequence on one session (a read can then authorize a write or an edit)."""


# --- the property ------------------------------------------------------------------------------


async def call_checked(session: Session, tool: str, args: object) -> ToolResult:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await session.call(tool, expand(args))
    assert isinstance(result, ToolResult)
    assert isinstance(result.text, str)
    if result.is_error:
        assert result.text.startswith("Error: "), result.text
        assert result.code is not None
        assert result.error is not None
        assert result.code != "TOOL_INTERNAL_ERROR", (tool, args, result.text)
        assert result.value is None
    else:
        assert result.code is None
        assert result.value is not None
        json.dumps(result.value)  # what an adapter or the MCP server sends on
    return result


async def check_calls(arena: Arena, policy: bool, sequence: list[tuple[str, object]]) -> None:
    workspace = Workspace.sandbox(arena.root, policy=policy)
    session = workspace.session()
    for tool, args in sequence:
        result = await call_checked(session, tool, args)
        event(f"{tool if tool in TOOLS else 'unknown tool'}: {result.code or 'ok'}")
    await workspace.aclose()
    assert arena.snapshot_outside() == arena.before


QUICK = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
@QUICK
@given(sequence=calls)
async def test_any_arguments_give_a_structured_result_and_stay_in_the_sandbox(
    arena: Arena, policy: bool, sequence: list[tuple[str, object]]
) -> None:
    await check_calls(arena, policy, sequence)


def longest_string(value: object) -> int:
    """The length of the longest string anywhere in `value` (keys included)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return max(map(longest_string, value), default=0)
    if isinstance(value, dict):
        return max(map(longest_string, [*value.keys(), *value.values()]), default=0)
    return 0


@QUICK
@given(sequence=calls)
def test_drawn_calls_hold_no_long_string_for_hypothesis_to_keep(
    sequence: list[tuple[str, object]],
) -> None:
    assert longest_string(sequence) <= 100


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=calls)
async def test_any_arguments_in_the_long_profile_give_structured_results(
    arena: Arena, policy: bool, sequence: list[tuple[str, object]]
) -> None:
    await check_calls(arena, policy, sequence)


async def test_a_write_of_a_lone_surrogate_is_a_clean_not_text_error(arena: Arena) -> None:
    workspace = Workspace.sandbox(arena.root, policy=False)
    result = await call_checked(
        workspace.session(), "write", {"file_path": "surrogate.txt", "content": "a\ud800b"}
    )
    assert (result.code, result.text) == (
        "FS_NOT_TEXT",
        f'Error: cannot write "{arena.root / "surrogate.txt"}": invalid UTF-8 text',
    )
    assert not (arena.root / "surrogate.txt").exists()
    await workspace.aclose()


async def test_an_edit_whose_replacement_has_a_lone_surrogate_changes_nothing(
    arena: Arena,
) -> None:
    (arena.root / "s.txt").write_text("keep\n", encoding="utf-8")
    workspace = Workspace.sandbox(arena.root, policy=False)
    result = await call_checked(
        workspace.session(),
        "edit",
        {"file_path": "s.txt", "old_string": "keep", "new_string": "\udfff"},
    )
    assert result.code == "FS_NOT_TEXT"
    assert (arena.root / "s.txt").read_bytes() == b"keep\n"
    await workspace.aclose()


async def test_a_lone_surrogate_or_nul_in_a_path_is_an_argument_or_not_found_error(
    arena: Arena,
) -> None:
    workspace = Workspace.sandbox(arena.root)
    session = workspace.session()
    surrogate = await call_checked(session, "read", {"file_path": "a\ud800"})
    nul = await call_checked(session, "read", {"file_path": "a.txt\0"})
    assert (surrogate.code, surrogate.text) == (
        "FS_NOT_FOUND",
        'Error: cannot resolve "a\\ud800": the path contains a lone surrogate',
    )
    assert (nul.code, nul.text) == (
        "FS_NOT_FOUND",
        'Error: cannot resolve "a.txt\\0": the path contains a NUL byte',
    )
    await workspace.aclose()


async def test_an_offset_past_any_number_is_an_argument_error_and_a_huge_one_out_of_range(
    arena: Arena,
) -> None:
    # A file of its own: the fuzzed writes of the module's other tests may leave anything
    # (a NUL: FS_NOT_TEXT) in the arena's a.txt.
    (arena.root / "offsets.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    workspace = Workspace.sandbox(arena.root)
    session = workspace.session()
    huge = await call_checked(session, "read", {"file_path": "offsets.txt", "offset": 10**5000})
    past = await call_checked(session, "read", {"file_path": "offsets.txt", "offset": 2**63 - 1})
    # Past the largest double, JavaScript holds Infinity: upstream's "finite number" refusal.
    assert (huge.code, huge.text) == (
        "INVALID_ARGS",
        'Error: invalid arguments: "offset" must be a finite JSON number',
    )
    assert past.code == "FS_NOT_FOUND"
    assert past.text.startswith("Error: offset 9223372036854776000 is out of range")
    await workspace.aclose()


async def test_a_path_of_thousands_of_components_is_an_io_error_not_a_crash(
    arena: Arena,
) -> None:
    workspace = Workspace.sandbox(arena.root, policy=False)
    session = workspace.session()
    deep = "/".join(["d"] * 3000)
    result = await call_checked(session, "write", {"file_path": deep, "content": "x"})
    assert result.code == "FS_IO_ERROR"
    assert result.text.endswith(": file name too long")
    assert not (arena.root / "d").exists()
    await workspace.aclose()
