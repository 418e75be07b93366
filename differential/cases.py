"""The deterministic case generator.

Every case is built from fixed data (no randomness, no clock), so two runs produce the
same JSON lines and the recorded upstream results stay valid until a case changes (each
recording carries the case's fingerprint). Case ids are ``group.subgroup.name``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from .model import Case, Part, Step

__all__ = ["generate"]

BOM = b"\xef\xbb\xbf"
EMOJI = "\U0001f600"  # 😀, astral: 4 UTF-8 bytes, 2 UTF-16 code units
CJK_B = "\U00020000"  # 𠀀, CJK Extension B, astral
CJK = "\u4e2d"  # 中, BMP: 3 UTF-8 bytes, 1 UTF-16 code unit
NUL = "\u0000"


class Raw(str):
    """Arguments given as raw JSON text (``2.0``, ``1e3``, ``-0`` kept as written)."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _args(value: object) -> str:
    if isinstance(value, Raw):
        json.loads(value)  # must be valid JSON for Python; the generator is wrong otherwise
        return str(value)
    return json.dumps(value, ensure_ascii=True)


class _Builder:
    """Collects steps with deterministic mtimes for the out-of-band writes."""

    def __init__(self) -> None:
        self.files: list[Step] = []
        self.steps: list[Step] = []

    def file(self, path: str, data: bytes | str) -> _Builder:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        step: Step = {"op": "put", "path": f"work/{path}", "b64": _b64(raw)}
        step["mtime"] = 900_000_000 + len(self.files)
        self.files.append(step)
        return self

    def big_file(self, path: str, *runs: tuple[bytes, int]) -> _Builder:
        """A large file given as runs of repeated bytes (keeps the case line small)."""
        parts: list[Part] = [{"b64": _b64(data), "repeat": count} for data, count in runs]
        step: Step = {"op": "put", "path": f"work/{path}", "parts": parts}
        step["mtime"] = 900_000_000 + len(self.files)
        self.files.append(step)
        return self

    def call(self, name: str, args: object, *, session: str | None = None) -> _Builder:
        step: Step = {"op": "call", "name": name, "args": _args(args)}
        if session is not None:
            step["session"] = session
        self.steps.append(step)
        return self

    def read(self, args: object, **kw: Any) -> _Builder:
        return self.call("read", args, **kw)

    def write(self, args: object, **kw: Any) -> _Builder:
        return self.call("write", args, **kw)

    def edit(self, args: object, **kw: Any) -> _Builder:
        return self.call("edit", args, **kw)

    def put(self, path: str, data: bytes | str) -> _Builder:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        mtime = 1_000_000_000 + 1000 * len(self.steps)
        self.steps.append({"op": "put", "path": f"work/{path}", "b64": _b64(raw), "mtime": mtime})
        return self

    def touch(self, path: str) -> _Builder:
        mtime = 1_000_000_000 + 1000 * len(self.steps)
        self.steps.append({"op": "touch", "path": f"work/{path}", "mtime": mtime})
        return self

    def delete(self, path: str) -> _Builder:
        self.steps.append({"op": "delete", "path": f"work/{path}"})
        return self

    def mkdir(self, path: str, *, setup: bool = True) -> _Builder:
        step: Step = {"op": "mkdir", "path": f"work/{path}"}
        (self.files if setup else self.steps).append(step)
        return self

    def symlink(self, path: str, target: str) -> _Builder:
        self.files.append({"op": "symlink", "path": f"work/{path}", "target": target})
        return self

    def fifo(self, path: str) -> _Builder:
        self.files.append({"op": "fifo", "path": f"work/{path}"})
        return self

    def chmod(self, path: str, mode: int) -> _Builder:
        self.files.append({"op": "chmod", "path": f"work/{path}", "mode": mode})
        return self

    def case(self, case_id: str, *, policy: bool = True) -> Case:
        return {"id": case_id, "policy": policy, "files": self.files, "steps": self.steps}


def _b() -> _Builder:
    return _Builder()


# ---------------------------------------------------------------------------------------
# Content variants: read rendering, then an edit and a write over the same bytes.
# ---------------------------------------------------------------------------------------

CONTENTS: dict[str, bytes] = {
    "empty": b"",
    "lf": b"alpha\nbeta\ngamma\n",
    "lf-noeol": b"alpha\nbeta\ngamma",
    "crlf": b"alpha\r\nbeta\r\ngamma\r\n",
    "crlf-noeol": b"alpha\r\nbeta\r\ngamma",
    "cr": b"alpha\rbeta\rgamma\r",
    "cr-noeol": b"alpha\rbeta\rgamma",
    "mixed": b"alpha\r\nbeta\ngamma\rdelta\r\n",
    "mixed-crlf-major": b"alpha\r\nbeta\r\ngamma\ndelta\r\n",
    "mixed-lf-major": b"alpha\nbeta\ngamma\r\ndelta\n",
    "mixed-tie": b"alpha\r\nbeta\ngamma\r\ndelta\n",
    "newline-only": b"\n",
    "two-newlines": b"\n\n",
    "crlf-only": b"\r\n",
    "cr-only": b"\r",
    "cr-cr-lf": b"alpha\r\r\nbeta\r\r\n",
    "trailing-cr": b"alpha\r",
    "blank-lines": b"\n\nalpha\n\n\nbeta\n\n",
    "spaces": b"  indented\n\ttabbed\ntrailing   \n",
    "bom-lf": BOM + b"alpha\nbeta\n",
    "bom-crlf": BOM + b"alpha\r\nbeta\r\n",
    "bom-only": BOM,
    "bom-newline": BOM + b"\n",
    "bom-twice": BOM + BOM + b"alpha\n",
    "bom-mid": b"alpha\xef\xbb\xbfbeta\n",
    "latin": "héllo wörld\nçà et là\n".encode(),
    "cjk": "中文内容\n日本語のテキスト\n".encode(),
    "emoji": f"smile {EMOJI}\n{EMOJI}{EMOJI}\n".encode(),
    "cjk-ext-b": f"{CJK_B}{CJK_B}\nx{CJK_B}\n".encode(),
    "combining": "e\u0301 and \u00e9\n".encode(),
    "zwj": "\U0001f468\u200d\U0001f469\u200d\U0001f467 family\n".encode(),
    "line-sep-u2028": "alpha\u2028beta\n".encode(),
    "para-sep-u2029": "alpha\u2029beta\n".encode(),
    "nel-u0085": "alpha\u0085beta\n".encode(),
    "vt-ff": b"alpha\x0bbeta\x0cgamma\n",
    "fs-gs-rs": b"alpha\x1cbeta\x1dgamma\x1edelta\n",
    "control-chars": b"bell\x07 esc\x1b[0m del\x7f\n",
    "noncharacter": "a\ufffeb\uffffc\n".encode(),
    "replacement-char": "a\ufffdb\n".encode(),
    "max-codepoint": "a\U0010ffffb\n".encode(),
    "private-use": "a\ue000b\n".encode(),
}

BINARY_CONTENTS: dict[str, bytes] = {
    "nul-first": b"\x00alpha\n",
    "nul-only": b"\x00",
    "nul-mid-line": b"alpha\x00beta\n",
    "nul-at-8191": b"a" * 8191 + b"\x00" + b"\nrest\n",
    "nul-at-8192": b"a" * 8192 + b"\x00" + b"\nrest\n",
    "nul-after-8k-lines": b"line\n" * 2000 + b"tail\x00end\n",
    "nul-at-end-20k": b"x" * 20_000 + b"\n\x00",
    "invalid-ff": b"alpha\xffbeta\n",
    "invalid-truncated-seq": b"alpha\xc3",
    "invalid-overlong": b"\xc0\xafalpha\n",
    "invalid-cesu-surrogate": b"a\xed\xa0\x80b\n",
    "invalid-latin1": "caf\xe9\n".encode("latin-1"),
    "invalid-after-8k": b"a" * 9000 + b"\n\xfe\n",
    "utf16le-bom": "hi\n".encode("utf-16"),
    "png-header": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}


def _content_cases() -> Iterator[Case]:
    for name, data in {**CONTENTS, **BINARY_CONTENTS}.items():
        yield _b().file("f.txt", data).read({"file_path": "f.txt"}).case(f"content.read.{name}")
    for name, data in CONTENTS.items():
        if name in {"empty", "bom-only", "newline-only", "two-newlines", "crlf-only", "cr-only"}:
            continue
        # An edit of one word, then a read of the result: the bytes on disk tell line
        # endings and the BOM apart.
        old = _first_word(data)
        yield (
            _b()
            .file("f.txt", data)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", "old_string": old, "new_string": old.upper() + "!"})
            .read({"file_path": "f.txt"})
            .case(f"content.edit.{name}")
        )
    for name, data in BINARY_CONTENTS.items():
        yield (
            _b()
            .file("f.txt", data)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": True})
            .case(f"content.edit.{name}", policy=False)
        )
    # write the same bytes (as text) over a fresh path, then read them back
    for name in ("lf", "crlf", "cr", "mixed", "bom-lf", "emoji", "cjk-ext-b", "nel-u0085"):
        text = CONTENTS[name].decode("utf-8")
        yield (
            _b()
            .write({"file_path": "w.txt", "content": text})
            .read({"file_path": "w.txt"})
            .case(f"content.write.{name}")
        )


def _first_word(data: bytes) -> str:
    text = data.decode("utf-8").lstrip("\ufeff")
    for token in text.replace("\r", "\n").split():
        return token[:5]
    return text[:1]


# ---------------------------------------------------------------------------------------
# Long lines and caps: 2000 characters per line, 2000 lines, 50 KiB of output.
# ---------------------------------------------------------------------------------------


def _line_cases() -> Iterator[Case]:
    # ASCII around the 2000-character cap
    for n in (1999, 2000, 2001, 2500, 10_000):
        yield (
            _b()
            .file("f.txt", "x" * n + "\n")
            .read({"file_path": "f.txt"})
            .case(f"cap.line.ascii-{n}")
        )
    # astral characters: 2 UTF-16 code units each
    for label, ch in (("emoji", EMOJI), ("cjk-b", CJK_B)):
        for n in (999, 1000, 1001, 1500, 1999, 2000, 2001, 2500):
            yield (
                _b()
                .file("f.txt", ch * n + "\n")
                .read({"file_path": "f.txt"})
                .case(f"cap.line.{label}-{n}")
            )
        # a cut that falls between the two halves of a surrogate pair
        for prefix in (1, 3, 999):
            data = "a" * prefix + ch * 1500 + "\n"
            yield (
                _b()
                .file("f.txt", data)
                .read({"file_path": "f.txt"})
                .case(f"cap.line.{label}-split-after-{prefix}-ascii")
            )
    # BMP multi-byte: 1 UTF-16 unit, 3 UTF-8 bytes
    for n in (2000, 2001):
        yield (
            _b()
            .file("f.txt", CJK * n + "\n")
            .read({"file_path": "f.txt"})
            .case(f"cap.line.cjk-{n}")
        )
    # combining sequences near the cut
    yield (
        _b()
        .file("f.txt", "e\u0301" * 1200 + "\n")
        .read({"file_path": "f.txt"})
        .case("cap.line.combining-2400")
    )
    # CRLF line at exactly the cap (the \r is stripped before counting)
    yield (
        _b()
        .file("f.txt", "x" * 2000 + "\r\n")
        .read({"file_path": "f.txt"})
        .case("cap.line.ascii-2000-crlf")
    )
    yield (
        _b()
        .file("f.txt", "x" * 2000 + "\r")
        .read({"file_path": "f.txt"})
        .case("cap.line.ascii-2000-cr-noeol")
    )
    # the byte cap: 51200 bytes of selected output
    yield (
        _b()
        .file("f.txt", ("x" * 2000 + "\n") * 30)
        .read({"file_path": "f.txt"})
        .case("cap.bytes.ascii-30x2000")
    )
    for lines in (5, 6, 7, 12):
        yield (
            _b()
            .file("f.txt", (EMOJI * 2000 + "\n") * lines)
            .read({"file_path": "f.txt"})
            .case(f"cap.bytes.emoji-{lines}x2000")
        )
    yield (
        _b()
        .file("f.txt", (CJK_B * 2000 + "\n") * 7)
        .read({"file_path": "f.txt"})
        .case("cap.bytes.cjk-b-7x2000")
    )
    yield (
        _b()
        .file("f.txt", (CJK * 2000 + "\n") * 10)
        .read({"file_path": "f.txt"})
        .case("cap.bytes.cjk-10x2000")
    )
    # rendered texts of "N: " are not counted: 51200 exactly vs 51201
    exact = "y" * 1023 + "\n"  # 1023 bytes + 1 joiner per line after the first
    for lines, extra in ((50, 0), (50, 1), (51, 0)):
        body = exact * (lines - 1) + "y" * (1023 + extra) + "\n"
        yield (
            _b()
            .file("f.txt", body)
            .read({"file_path": "f.txt"})
            .case(f"cap.bytes.exact-{lines}-lines-plus-{extra}")
        )
    yield (
        _b()
        .file("f.txt", "z" * 60_000 + "\n")
        .read({"file_path": "f.txt"})
        .case("cap.bytes.one-huge-line")
    )
    yield (
        _b()
        .file("f.txt", "a\n" + "z" * 60_000 + "\nb\n")
        .read({"file_path": "f.txt", "offset": 2})
        .case("cap.bytes.huge-line-at-offset")
    )
    # the line cap
    for n in (1999, 2000, 2001, 2500):
        body = "".join(f"l{i}\n" for i in range(1, n + 1))
        yield _b().file("f.txt", body).read({"file_path": "f.txt"}).case(f"cap.lines.{n}")
    body = "".join(f"l{i}\n" for i in range(1, 2501))
    yield (
        _b()
        .file("f.txt", body)
        .read({"file_path": "f.txt", "offset": 2001})
        .case("cap.lines.2500-offset-2001")
    )
    yield (
        _b()
        .file("f.txt", body)
        .read({"file_path": "f.txt", "offset": 500, "limit": 2000})
        .case("cap.lines.2500-offset-500")
    )
    # byte cap and line cap together, continuing with the suggested offset
    yield (
        _b()
        .file("f.txt", ("w" * 100 + "\n") * 1000)
        .read({"file_path": "f.txt"})
        .read({"file_path": "f.txt", "offset": 508})
        .case("cap.bytes.continue")
    )
    # a streamed read (10 MiB and over takes the streaming path upstream)
    yield (
        _b()
        .big_file("big.txt", (b"0123456789abcdef" * 63 + b"\n", 10_700))
        .read({"file_path": "big.txt", "offset": 10_690})
        .case("cap.stream.10mib-tail")
    )
    yield (
        _b()
        .big_file("big.txt", (BOM + b"bom first\n", 1), (b"x", 10_500_000), (b"\n", 1))
        .read({"file_path": "big.txt", "limit": 1})
        .case("cap.stream.10mib-bom")
    )
    yield (
        _b()
        .big_file("big.txt", (b"q", 10_500_000), (b"\n\x00", 1))
        .read({"file_path": "big.txt"})
        .case("cap.stream.10mib-nul-at-end")
    )


# ---------------------------------------------------------------------------------------
# offset / limit values, through the JSON parsers of both sides.
# ---------------------------------------------------------------------------------------

OFFSET_LIMIT_VALUES: dict[str, str] = {
    "1": "1",
    "2": "2",
    "0": "0",
    "neg1": "-1",
    "neg0": "-0",
    "neg0.0": "-0.0",
    "2.0": "2.0",
    "2.5": "2.5",
    "1e0": "1e0",
    "1e3": "1e3",
    "2E0": "2E0",
    "1.0e1": "1.0e1",
    "huge-1e20": "100000000000000000000",
    "huge-1e21": "1000000000000000000000",
    "1e21-float": "1e21",
    "2pow53+1": "9007199254740993",
    "1e400": "1e400",
    "string-2": '"2"',
    "string-empty": '""',
    "true": "true",
    "false": "false",
    "null": "null",
    "array": "[2]",
    "object": '{"n": 2}',
    "2001": "2001",
    "2000": "2000",
    "1999": "1999",
    "4": "4",
    "5": "5",
    "6": "6",
}


def _offset_limit_cases() -> Iterator[Case]:
    body = "one\ntwo\nthree\nfour\nfive\n"
    for arg in ("offset", "limit"):
        for label, raw in OFFSET_LIMIT_VALUES.items():
            args = Raw(f'{{"file_path": "f.txt", "{arg}": {raw}}}')
            yield _b().file("f.txt", body).read(args).case(f"args.read.{arg}.{label}")
    combos = [
        ("o3-l2", 3, 2),
        ("o5-l1", 5, 1),
        ("o5-l10", 5, 10),
        ("o1-l1", 1, 1),
        ("o2-l2000", 2, 2000),
    ]
    for label, offset, limit in combos:
        yield (
            _b()
            .file("f.txt", body)
            .read({"file_path": "f.txt", "offset": offset, "limit": limit})
            .case(f"args.read.window.{label}")
        )
    for name, data, offset in (
        ("empty-o1", b"", 1),
        ("empty-o2", b"", 2),
        ("newline-only-o1", b"\n", 1),
        ("newline-only-o2", b"\n", 2),
        ("noeol-o3", b"a\nb\nc", 3),
        ("noeol-o4", b"a\nb\nc", 4),
        ("two-newlines-o3", b"\n\n", 3),
        ("crlf-o3", b"a\r\nb\r\n", 3),
        ("bom-only-o1", BOM, 1),
        ("bom-only-o2", BOM, 2),
    ):
        yield (
            _b()
            .file("f.txt", data)
            .read({"file_path": "f.txt", "offset": offset})
            .case(f"args.read.edge.{name}")
        )
    # an out-of-range offset that the byte cap hides: a huge line then a huge offset
    yield (
        _b()
        .file("f.txt", "z" * 60_000 + "\n")
        .read({"file_path": "f.txt", "offset": 2})
        .case("args.read.edge.offset-past-huge-line")
    )


# ---------------------------------------------------------------------------------------
# Argument types, missing/extra arguments, arguments that are not an object.
# ---------------------------------------------------------------------------------------

TYPE_VALUES: dict[str, str] = {
    "int": "1",
    "float": "1.5",
    "true": "true",
    "null": "null",
    "array": '["a.txt"]',
    "object": '{"p": "a.txt"}',
    "empty-string": '""',
}

GOOD_ARGS: dict[str, dict[str, object]] = {
    "read": {"file_path": "a.txt"},
    "write": {"file_path": "new.txt", "content": "hello\n"},
    "edit": {"file_path": "a.txt", "old_string": "hello", "new_string": "bye"},
}
OPTIONAL = {"read": ["offset", "limit"], "write": [], "edit": ["replace_all"]}


def _with(base: dict[str, object], key: str, raw: str) -> Raw:
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in base.items() if k != key]
    parts.append(f"{json.dumps(key)}: {raw}")
    return Raw("{" + ", ".join(parts) + "}")


def _argument_cases() -> Iterator[Case]:
    for tool, good in GOOD_ARGS.items():
        keys = [*good, *OPTIONAL[tool]]
        for key in keys:
            for label, raw in TYPE_VALUES.items():
                if tool == "read" and key in {"offset", "limit"}:
                    continue  # covered by args.read.offset/limit
                if label == "empty-string" and key in {"content", "new_string"}:
                    label = "empty-string-legal"
                yield (
                    _b()
                    .file("a.txt", "hello\n")
                    .read({"file_path": "a.txt"})
                    .call(tool, _with(good, key, raw))
                    .case(f"args.{tool}.type.{key}.{label}")
                )
        for key in good:
            missing = {k: v for k, v in good.items() if k != key}
            yield (
                _b()
                .file("a.txt", "hello\n")
                .read({"file_path": "a.txt"})
                .call(tool, missing)
                .case(f"args.{tool}.missing.{key}")
            )
        yield _b().file("a.txt", "hello\n").call(tool, {}).case(f"args.{tool}.missing.all")
        # several problems at once: the order and the joiner of the messages
        several: dict[str, object] = {"file_path": 7}
        if tool == "read":
            several.update(offset="x", limit=False)
        elif tool == "edit":
            several.update(old_string=1, replace_all="yes")
        yield _b().file("a.txt", "hello\n").call(tool, several).case(f"args.{tool}.several")
        # extra arguments
        for label, extra in (
            ("unknown", {"foo": 1}),
            ("camel-case", {"filePath": "a.txt"}),
            ("null-extra", {"bar": None}),
            ("sandbox-permissions", {"sandbox_permissions": "full-access"}),
            ("justification", {"justification": "because"}),
        ):
            yield (
                _b()
                .file("a.txt", "hello\n")
                .read({"file_path": "a.txt"})
                .call(tool, {**good, **extra})
                .case(f"args.{tool}.extra.{label}")
            )
        yield (
            _b()
            .file("a.txt", "hello\n")
            .read({"file_path": "a.txt"})
            .call(tool, _with(good, "extra", "-0"))
            .case(f"args.{tool}.extra.negative-zero")
        )
        yield (
            _b()
            .file("a.txt", "hello\n")
            .read({"file_path": "a.txt"})
            .call(tool, _with(good, "extra", "1e400"))
            .case(f"args.{tool}.extra.infinity")
        )
        if tool in {"write", "edit"}:
            escalations: list[tuple[str, dict[str, object]]] = [
                ("escalation-both", {"sandbox_permissions": "full-access", "justification": "x"}),
                (
                    "escalation-blank-reason",
                    {"sandbox_permissions": "full-access", "justification": "  "},
                ),
                (
                    "escalation-reason-number",
                    {"sandbox_permissions": "full-access", "justification": 5},
                ),
                ("justification-number", {"justification": 5}),
            ]
            for label, escalation in escalations:
                yield (
                    _b()
                    .file("a.txt", "hello\n")
                    .read({"file_path": "a.txt"})
                    .call(tool, {**good, **escalation})
                    .case(f"args.{tool}.extra.{label}")
                )
        # arguments that are not an object
        for label, raw in (
            ("array", "[]"),
            ("array-of-object", '[{"file_path": "a.txt"}]'),
            ("string", '"a.txt"'),
            ("number", "1"),
            ("null", "null"),
            ("true", "true"),
            ("json-text-in-string", json.dumps(json.dumps(good))),
        ):
            yield (
                _b()
                .file("a.txt", "hello\n")
                .call(tool, Raw(raw))
                .case(f"args.{tool}.not-object.{label}")
            )
        # duplicate keys: the last one wins in both parsers
        yield (
            _b()
            .file("a.txt", "hello\n")
            .file("b.txt", "bye\n")
            .read({"file_path": "b.txt"})
            .call(tool, Raw(_with(good, "file_path", '"a.txt", "file_path": "b.txt"')))
            .case(f"args.{tool}.duplicate-key")
        )
    # unknown tools
    for label, name in (
        ("glob-like", "delete"),
        ("capitalized", "Read"),
        ("padded", " read"),
        ("empty", ""),
        ("namespaced", "fs.read"),
        ("nul", "read\u0000"),
    ):
        yield _b().call(name, {"file_path": "a.txt"}).case(f"args.unknown-tool.{label}")
    yield _b().call("nope", Raw("[]")).case("args.unknown-tool.args-not-object")
    yield _b().call("nope", Raw('{"x": -0}')).case("args.unknown-tool.args-negative-zero")
    # replace_all variants
    for label, raw in (
        ("false", "false"),
        ("true-single", "true"),
        ("string-true", '"true"'),
        ("int-1", "1"),
        ("int-0", "0"),
        ("null", "null"),
    ):
        yield (
            _b()
            .file("a.txt", "hello\n")
            .read({"file_path": "a.txt"})
            .edit(
                Raw(
                    f'{{"file_path": "a.txt", "old_string": "hello", "new_string": "bye", '
                    f'"replace_all": {raw}}}'
                )
            )
            .read({"file_path": "a.txt"})
            .case(f"args.edit.replace-all.{label}")
        )
    # value checks beyond the types
    for label, args in (
        ("old-empty", {"old_string": "", "new_string": "x"}),
        ("old-equals-new", {"old_string": "hello", "new_string": "hello"}),
        ("old-empty-equals-new", {"old_string": "", "new_string": ""}),
        ("new-empty-deletes", {"old_string": "hello", "new_string": ""}),
        ("old-whitespace", {"old_string": " ", "new_string": "_"}),
        ("old-crlf-equals-new-lf", {"old_string": "a\r\nb", "new_string": "a\nb"}),
    ):
        yield (
            _b()
            .file("a.txt", "hello world\na\r\nb\n")
            .read({"file_path": "a.txt"})
            .edit({"file_path": "a.txt", **args})
            .case(f"args.edit.value.{label}")
        )
    yield (
        _b()
        .write({"file_path": "e.txt", "content": ""})
        .read({"file_path": "e.txt"})
        .case("args.write.value.empty-content")
    )


# ---------------------------------------------------------------------------------------
# Paths: whitespace, ~, NUL, odd shapes, non-regular targets.
# ---------------------------------------------------------------------------------------

PATHS: dict[str, str] = {
    "empty": "",
    "space": " ",
    "spaces": "   ",
    "tab": "\t",
    "newline": "\n",
    "nbsp": "\u00a0",
    "ideographic-space": "\u3000",
    "zero-width-space": "\u200b",
    "leading-space": " a.txt",
    "trailing-space": "a.txt ",
    "dot": ".",
    "dotdot": "..",
    "dot-slash": "./a.txt",
    "trailing-slash": "a.txt/",
    "double-slash": "sub//b.txt",
    "up-and-back": "sub/../a.txt",
    "through-file": "a.txt/child",
    "tilde": "~",
    "tilde-slash": "~/x.txt",
    "tilde-user": "~dshdiff-no-such-user/x.txt",
    "tilde-nested": "sub/~/x.txt",
    "tilde-named-file": "~x.txt",
    "nul-middle": "a\u0000b.txt",
    "nul-end": "a.txt\u0000",
    "nul-only": "\u0000",
    "lone-surrogate": "a\ud800.txt",
    "unicode": "d\u00e9j\u00e0-\u4e2d-\U0001f600.txt",
    "nfd-name": "de\u0301ja.txt",
    "long-component": "n" * 300 + ".txt",
    "backslash": "sub\\b.txt",
    "dollar-home": "$HOME/x.txt",
    "percent-encoded": "a%2Etxt",
    "file-url": "file:///etc/hostname",
    "glob-star": "*.txt",
    "newline-in-name": "a\nb.txt",
}


def _path_cases() -> Iterator[Case]:
    for label, path in PATHS.items():
        yield (
            _b()
            .file("a.txt", "hello\n")
            .file("sub/b.txt", "bee\n")
            .read({"file_path": path})
            .case(f"path.read.{label}")
        )
        yield (
            _b()
            .file("a.txt", "hello\n")
            .write({"file_path": path, "content": "written\n"})
            .case(f"path.write.{label}")
        )
        yield (
            _b()
            .file("a.txt", "hello\n")
            .file("sub/b.txt", "bee\n")
            .edit({"file_path": path, "old_string": "hello", "new_string": "bye"})
            .case(f"path.edit.{label}", policy=False)
        )
    # another user's home: read only (a write or edit could reach the real /root)
    yield _b().read({"file_path": "~root/dshdiff-absent.txt"}).case("path.read.tilde-root")
    # ~ written then read back, and an absolute path into the scratch home
    yield (
        _b()
        .write({"file_path": "~/t.txt", "content": "tilde\n"})
        .read({"file_path": "~/t.txt"})
        .edit({"file_path": "~/t.txt", "old_string": "tilde", "new_string": "TILDE"})
        .read({"file_path": "~/t.txt"})
        .case("path.tilde.round-trip")
    )
    # non-regular targets
    for tool, args in (
        ("read", {}),
        ("write", {"content": "x"}),
        ("edit", {"old_string": "a", "new_string": "b"}),
    ):
        yield (
            _b()
            .mkdir("d")
            .call(tool, {"file_path": "d", **args})
            .case(f"path.{tool}.directory", policy=False)
        )
        yield (
            _b()
            .fifo("p")
            .call(tool, {"file_path": "p", **args})
            .case(f"path.{tool}.fifo", policy=False)
        )
        yield (
            _b()
            .symlink("loop", "loop")
            .call(tool, {"file_path": "loop", **args})
            .case(f"path.{tool}.symlink-loop", policy=False)
        )
        yield (
            _b()
            .symlink("dangling", "missing.txt")
            .call(tool, {"file_path": "dangling", **args})
            .case(f"path.{tool}.dangling-symlink", policy=False)
        )
        yield (
            _b()
            .call(tool, {"file_path": "missing.txt", **args})
            .case(f"path.{tool}.missing", policy=False)
        )
        yield (
            _b()
            .call(tool, {"file_path": "no/such/dir/f.txt", **args})
            .case(f"path.{tool}.missing-parents", policy=False)
        )
    # symlinks to regular files
    yield (
        _b()
        .file("real.txt", "hello\n")
        .symlink("link.txt", "real.txt")
        .read({"file_path": "link.txt"})
        .edit({"file_path": "link.txt", "old_string": "hello", "new_string": "bye"})
        .write({"file_path": "link.txt", "content": "overwritten\n"})
        .read({"file_path": "real.txt"})
        .case("path.symlink.through-link")
    )
    yield (
        _b()
        .file("real.txt", "hello\n")
        .symlink("link.txt", "real.txt")
        .read({"file_path": "real.txt"})
        .edit({"file_path": "link.txt", "old_string": "hello", "new_string": "bye"})
        .case("path.symlink.alias-shares-observation")
    )
    yield (
        _b()
        .file("real/f.txt", "hello\n")
        .symlink("alias", "real")
        .read({"file_path": "alias/f.txt"})
        .edit({"file_path": "real/f.txt", "old_string": "hello", "new_string": "bye"})
        .read({"file_path": "alias/../real/f.txt"})
        .case("path.symlink.dir-alias")
    )
    yield (
        _b()
        .symlink("dangling", "made.txt")
        .write({"file_path": "dangling", "content": "through\n"})
        .case("path.symlink.write-dangling", policy=False)
    )
    # an absolute path and a path into a fresh nested directory
    yield (
        _b()
        .write({"file_path": "deep/er/new.txt", "content": "nested\n"})
        .read({"file_path": "deep/er/new.txt"})
        .case("path.write.creates-parents")
    )
    yield (
        _b()
        .file("a.txt", "hello\n")
        .read({"file_path": "/a.txt"})
        .case("path.read.root-relative-absolute")
    )


# ---------------------------------------------------------------------------------------
# The policy: reads, stale versions, create-then-edit, sessions; and the bare stack.
# ---------------------------------------------------------------------------------------


def _policy_cases() -> Iterator[Case]:
    for policy in (True, False):
        tag = "policy" if policy else "bare"
        yield (
            _b()
            .file("a.txt", "original\n")
            .write({"file_path": "a.txt", "content": "clobber\n"})
            .case(f"{tag}.write.unread-existing", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "original\n")
            .read({"file_path": "a.txt"})
            .write({"file_path": "a.txt", "content": "replaced\n"})
            .case(f"{tag}.write.after-read", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "original\n")
            .read({"file_path": "a.txt"})
            .put("a.txt", "changed externally\n")
            .write({"file_path": "a.txt", "content": "replaced\n"})
            .read({"file_path": "a.txt"})
            .write({"file_path": "a.txt", "content": "replaced\n"})
            .case(f"{tag}.write.stale-then-reread", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "original\n")
            .read({"file_path": "a.txt"})
            .touch("a.txt")
            .write({"file_path": "a.txt", "content": "replaced\n"})
            .case(f"{tag}.write.stale-touch-only", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "original\n")
            .read({"file_path": "a.txt"})
            .delete("a.txt")
            .edit({"file_path": "a.txt", "old_string": "original", "new_string": "x"})
            .write({"file_path": "a.txt", "content": "premature\n"})
            .read({"file_path": "a.txt"})
            .edit({"file_path": "a.txt", "old_string": "original", "new_string": "x"})
            .write({"file_path": "a.txt", "content": "fresh\n"})
            .case(f"{tag}.deleted-observed-target", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "hello world\n")
            .edit({"file_path": "a.txt", "old_string": "world", "new_string": "there"})
            .case(f"{tag}.edit.unread", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "hello world\n")
            .read({"file_path": "a.txt", "offset": 1, "limit": 1})
            .put("a.txt", "goodbye\n")
            .edit({"file_path": "a.txt", "old_string": "world", "new_string": "there"})
            .read({"file_path": "a.txt"})
            .edit({"file_path": "a.txt", "old_string": "goodbye", "new_string": "hello"})
            .case(f"{tag}.edit.stale-then-reread", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "hello world\n")
            .read({"file_path": "a.txt"})
            .put("a.txt", "hello world\n")
            .edit({"file_path": "a.txt", "old_string": "world", "new_string": "there"})
            .case(f"{tag}.edit.stale-same-bytes", policy=policy)
        )
        yield (
            _b()
            .write({"file_path": "n.txt", "content": "one two\n"})
            .edit({"file_path": "n.txt", "old_string": "two", "new_string": "three"})
            .edit({"file_path": "n.txt", "old_string": "three", "new_string": "four"})
            .write({"file_path": "n.txt", "content": "rewritten\n"})
            .read({"file_path": "n.txt"})
            .case(f"{tag}.create-then-edit", policy=policy)
        )
        yield (
            _b()
            .read({"file_path": "n.txt"})
            .write({"file_path": "n.txt", "content": "created after a miss\n"})
            .case(f"{tag}.write.after-read-not-found", policy=policy)
        )
        yield (
            _b()
            .read({"file_path": "n.txt"})
            .put("n.txt", "someone else\n")
            .write({"file_path": "n.txt", "content": "mine\n"})
            .case(f"{tag}.write.create-race-lost", policy=policy)
        )
        yield (
            _b()
            .edit({"file_path": "n.txt", "old_string": "a", "new_string": "b"})
            .case(f"{tag}.edit.missing", policy=policy)
        )
        yield (
            _b()
            .read({"file_path": "n.txt"})
            .edit({"file_path": "n.txt", "old_string": "a", "new_string": "b"})
            .case(f"{tag}.edit.missing-after-read-not-found", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "alpha\n")
            .read({"file_path": "a.txt"})
            .edit({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session="b")
            .write({"file_path": "a.txt", "content": "gamma\n"}, session="b")
            .read({"file_path": "a.txt"}, session="b")
            .edit({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session="b")
            .edit({"file_path": "a.txt", "old_string": "alpha", "new_string": "delta"})
            .case(f"{tag}.sessions.separate-observations", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "alpha\n")
            .read({"file_path": "a.txt"})
            .read({"file_path": "a.txt"}, session="b")
            .edit({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session="b")
            .edit({"file_path": "a.txt", "old_string": "alpha", "new_string": "gamma"})
            .case(f"{tag}.sessions.second-session-wins", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "x\n")
            .read({"file_path": "a.txt"})
            .read({"file_path": "a.txt", "offset": 5})
            .put("a.txt", "y\n")
            .read({"file_path": "a.txt", "offset": 5})
            .edit({"file_path": "a.txt", "old_string": "y", "new_string": "z"})
            .case(f"{tag}.read.failed-window-records-nothing", policy=policy)
        )
        yield (
            _b()
            .file("a.bin", b"\x00\x01")
            .read({"file_path": "a.bin"})
            .write({"file_path": "a.bin", "content": "text now\n"})
            .case(f"{tag}.write.over-unreadable-binary", policy=policy)
        )
        yield (
            _b()
            .file("a.txt", "hello\n")
            .chmod("a.txt", 0o755)
            .read({"file_path": "a.txt"})
            .write({"file_path": "a.txt", "content": "mode kept?\n"})
            .edit({"file_path": "a.txt", "old_string": "kept", "new_string": "KEPT"})
            .case(f"{tag}.write.keeps-mode", policy=policy)
        )
        yield (
            _b()
            .write({"file_path": "fresh.txt", "content": "new file mode\n"})
            .case(f"{tag}.write.new-file-mode", policy=policy)
        )


# ---------------------------------------------------------------------------------------
# Edit semantics: matching, line endings in old/new strings, BOM, surrogates.
# ---------------------------------------------------------------------------------------


def _edit_cases() -> Iterator[Case]:
    plain = "alpha beta\ngamma beta\ndelta\n"
    for label, args in (
        ("unique", {"old_string": "delta", "new_string": "DELTA"}),
        ("not-found", {"old_string": "epsilon", "new_string": "x"}),
        ("ambiguous", {"old_string": "beta", "new_string": "x"}),
        ("ambiguous-replace-all", {"old_string": "beta", "new_string": "x", "replace_all": True}),
        ("replace-all-single", {"old_string": "delta", "new_string": "x", "replace_all": True}),
        ("multiline", {"old_string": "beta\ngamma", "new_string": "B\nG"}),
        ("whole-file", {"old_string": plain, "new_string": "all new\n"}),
        ("case-mismatch", {"old_string": "ALPHA", "new_string": "x"}),
        ("overlapping", {"old_string": "a b", "new_string": "ab"}),
        ("dollar-patterns", {"old_string": "delta", "new_string": "$& $1 $$ $'"}),
        ("backslashes", {"old_string": "delta", "new_string": "\\n\\t\\\\"}),
        ("newline-to-crlf", {"old_string": "delta\n", "new_string": "delta\r\nmore\r\n"}),
        ("insert-cr", {"old_string": "delta", "new_string": "del\rta"}),
        ("nfd-vs-nfc", {"old_string": "gamma beta", "new_string": "gamma b\u00e9ta"}),
        ("crlf-old-on-lf", {"old_string": "delta\r\n", "new_string": "DELTA\n"}),
        ("replace-all-not-found", {"old_string": "zeta", "new_string": "x", "replace_all": True}),
        ("regex-chars", {"old_string": "a.*b", "new_string": "x"}),
    ):
        yield (
            _b()
            .file("f.txt", plain)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", **args})
            .read({"file_path": "f.txt"})
            .case(f"edit.match.{label}")
        )
    yield (
        _b()
        .file("f.txt", "aaaa\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "aa", "new_string": "b", "replace_all": True})
        .case("edit.match.overlapping-runs")
    )
    yield (
        _b()
        .file("f.txt", "aaa\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "aa", "new_string": "b"})
        .case("edit.match.overlapping-count")
    )
    crlf = "one\r\ntwo\r\nthree\r\n"
    for label, args in (
        ("lf-old-on-crlf", {"old_string": "one\ntwo", "new_string": "1\n2"}),
        ("crlf-old-on-crlf", {"old_string": "one\r\ntwo", "new_string": "1\r\n2"}),
        ("cr-in-old", {"old_string": "one\r", "new_string": "1"}),
        ("lone-crlf-old", {"old_string": "\r\n", "new_string": "\n", "replace_all": True}),
        ("append-line", {"old_string": "three\n", "new_string": "three\nfour\n"}),
    ):
        yield (
            _b()
            .file("f.txt", crlf)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", **args})
            .case(f"edit.crlf.{label}")
        )
    cr = "one\rtwo\rthree\r"
    for label, args in (
        ("plain", {"old_string": "two", "new_string": "2"}),
        ("cr-old", {"old_string": "one\rtwo", "new_string": "1\r2"}),
        ("lf-old", {"old_string": "one\ntwo", "new_string": "1\n2"}),
    ):
        yield (
            _b()
            .file("f.txt", cr)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", **args})
            .case(f"edit.cr.{label}")
        )
    mixed = "a\r\nb\nc\r\nd\n"
    yield (
        _b()
        .file("f.txt", mixed)
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "b\nc", "new_string": "B\nC"})
        .case("edit.mixed.across-endings")
    )
    yield (
        _b()
        .file("f.txt", "x\r\n" * 3000 + "y\n" * 10)
        .read({"file_path": "f.txt", "limit": 1})
        .edit({"file_path": "f.txt", "old_string": "y\ny", "new_string": "z\nz"})
        .case("edit.mixed.detect-window")
    )
    yield (
        _b()
        .file("f.txt", "y\n" * 3000 + "x\r\n" * 3000)
        .read({"file_path": "f.txt", "limit": 1})
        .edit({"file_path": "f.txt", "old_string": "x\r\nx", "new_string": "w\nw"})
        .case("edit.mixed.crlf-after-4k")
    )
    bom = BOM + b"hello\nworld\n"
    for label, args in (
        ("plain", {"old_string": "world", "new_string": "there"}),
        ("first-word", {"old_string": "hello", "new_string": "howdy"}),
        ("old-with-bom", {"old_string": "\ufeffhello", "new_string": "howdy"}),
        ("old-with-bom-keep", {"old_string": "\ufeffhello", "new_string": "\ufeffhowdy"}),
        ("old-is-bom", {"old_string": "\ufeff", "new_string": ""}),
        ("new-adds-bom", {"old_string": "world", "new_string": "\ufeffworld"}),
    ):
        yield (
            _b()
            .file("f.txt", bom)
            .read({"file_path": "f.txt"})
            .edit({"file_path": "f.txt", **args})
            .read({"file_path": "f.txt"})
            .case(f"edit.bom.{label}")
        )
    yield (
        _b()
        .file("f.txt", BOM + b"a\r\nb\r\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "b", "new_string": "c"})
        .case("edit.bom.crlf")
    )
    yield (
        _b()
        .file("f.txt", "hello\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "hello", "new_string": "\ufeffhello"})
        .read({"file_path": "f.txt"})
        .case("edit.bom.new-file-gains-bom")
    )
    yield (
        _b()
        .write({"file_path": "w.txt", "content": "\ufeffwritten with bom\n"})
        .read({"file_path": "w.txt"})
        .edit({"file_path": "w.txt", "old_string": "written", "new_string": "WRITTEN"})
        .case("edit.bom.written-bom")
    )
    # lone surrogates (JSON "\ud800") in what is written
    for label, text in (
        ("high", "a\ud800b"),
        ("low", "a\udc00b"),
        ("reversed-pair", "\udc00\ud800"),
        ("high-at-end", "end\ud83d"),
    ):
        yield (
            _b()
            .write({"file_path": "s.txt", "content": text})
            .read({"file_path": "s.txt"})
            .case(f"surrogate.write.{label}")
        )
        yield (
            _b()
            .file("s.txt", "hello\n")
            .read({"file_path": "s.txt"})
            .edit({"file_path": "s.txt", "old_string": "hello", "new_string": text})
            .read({"file_path": "s.txt"})
            .case(f"surrogate.edit-new.{label}")
        )
        yield (
            _b()
            .file("s.txt", "hello\n")
            .read({"file_path": "s.txt"})
            .edit({"file_path": "s.txt", "old_string": text, "new_string": "x"})
            .case(f"surrogate.edit-old.{label}")
        )
    yield (
        _b()
        .file("s.txt", f"pair {EMOJI}\n")
        .read({"file_path": "s.txt"})
        .edit({"file_path": "s.txt", "old_string": "\ud83d", "new_string": "x"})
        .case("surrogate.edit-old.half-of-pair")
    )
    yield (
        _b()
        .write({"file_path": "s.txt", "content": "\ud83d\ude00 escaped pair\n"})
        .read({"file_path": "s.txt"})
        .case("surrogate.write.escaped-valid-pair")
    )
    # big edits and a no-op-looking edit
    yield (
        _b()
        .file("f.txt", "line\n" * 50_000)
        .read({"file_path": "f.txt", "limit": 1})
        .edit({"file_path": "f.txt", "old_string": "line\n", "new_string": "", "replace_all": True})
        .case("edit.size.delete-everything")
    )
    yield (
        _b()
        .file("f.txt", "only\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "only\n", "new_string": ""})
        .read({"file_path": "f.txt"})
        .case("edit.size.to-empty")
    )
    yield (
        _b()
        .file("f.txt", "x" * 2001 + "\n")
        .read({"file_path": "f.txt"})
        .edit({"file_path": "f.txt", "old_string": "x" * 2001, "new_string": "short"})
        .case("edit.size.truncated-line-edited")
    )


# ---------------------------------------------------------------------------------------
# Added with the fidelity fixes (issue 16): where the first run could not tell.
# ---------------------------------------------------------------------------------------


def _fidelity_cases() -> Iterator[Case]:
    # a path through a regular file, also under the policy (which asks edits for a read)
    deep = "a.txt/x/y.txt"
    yield (
        _b().file("a.txt", "hello\n").read({"file_path": deep}).case("path.read.through-file-deep")
    )
    yield (
        _b()
        .file("a.txt", "hello\n")
        .write({"file_path": deep, "content": "x"})
        .case("path.write.through-file-deep", policy=False)
    )
    for label, path in (("through-file", "a.txt/child"), ("through-file-deep", deep)):
        yield (
            _b()
            .file("a.txt", "hello\n")
            .edit({"file_path": path, "old_string": "hello", "new_string": "bye"})
            .case(f"path.edit-observed.{label}")
        )
    yield (
        _b()
        .file("a.txt", "hello\n")
        .read({"file_path": "a.txt/child"})
        .edit({"file_path": "a.txt/child", "old_string": "hello", "new_string": "bye"})
        .case("path.edit-observed.through-file-after-read")
    )
    # negative zero written other ways, and deep inside an argument
    body = "one\ntwo\n"
    for label, raw in (("neg0e0", "-0e0"), ("neg0E+2", "-0E+2")):
        args = Raw(f'{{"file_path": "f.txt", "offset": {raw}}}')
        yield _b().file("f.txt", body).read(args).case(f"args.read.offset.{label}")
    nested = Raw('{"file_path": "f.txt", "extra": {"a": [1, -0]}}')
    yield _b().file("f.txt", body).read(nested).case("args.read.extra.negative-zero-nested")
    yield (
        _b()
        .file("f.txt", body)
        .read(Raw('{"file_path": "f.txt", "offset": 1, "limit": -0}'))
        .case("args.read.limit.neg0-beside-valid")
    )


def generate() -> list[Case]:
    """All cases, in a stable order, with unique ids."""
    cases: list[Case] = []
    for group in (
        _content_cases,
        _line_cases,
        _offset_limit_cases,
        _argument_cases,
        _path_cases,
        _policy_cases,
        _edit_cases,
        _fidelity_cases,
    ):
        cases.extend(group())
    seen: set[str] = set()
    for case in cases:
        if case["id"] in seen:
            raise ValueError(f"duplicate case id {case['id']}")
        seen.add(case["id"])
    return cases
