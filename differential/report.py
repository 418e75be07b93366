"""REPORT.md: the summary, each class with its cases and a minimal example, and the exact
upstream argument-error strings."""

from __future__ import annotations

import base64
import json
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable

from .classify import CASCADE, CLASSES, UNCLASSIFIED
from .compare import CaseOutcome, Decisions, Divergence
from .model import Case, Entry, Result

__all__ = ["render_report", "summary_line"]

EXCERPT = 240


_INVISIBLE = {"Cc", "Cf", "Co", "Cs", "Zl", "Zp", "Zs"}


def _escape(char: str) -> str:
    if char == " " or unicodedata.category(char) not in _INVISIBLE:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def show(text: str) -> str:
    """`text` as an exact JSON string literal: printable non-ASCII kept, invisible and
    format characters (BOM, NBSP, zero-width, lone surrogates) escaped."""
    literal = json.dumps(text, ensure_ascii=False)
    return "".join(_escape(char) for char in literal)


def _excerpts(a: str, b: str) -> tuple[str, str, str]:
    """Both texts, shortened around their first difference when long."""
    if len(a) <= 2 * EXCERPT and len(b) <= 2 * EXCERPT:
        return show(a), show(b), ""
    at = 0
    while at < min(len(a), len(b)) and a[at] == b[at]:
        at += 1
    start = max(0, at - 60)
    note = (
        f" (excerpts from character {start}, where the texts part at {at}; "
        f"lengths {len(a)} and {len(b)})"
    )
    lead = "…" if start else ""
    return lead + show(a[start : start + EXCERPT]), lead + show(b[start : start + EXCERPT]), note


def summary_line(outcomes: list[CaseOutcome], decisions: Decisions) -> str:
    diverging = [o for o in outcomes if o.diverges]
    documented = sum(1 for o in diverging if decisions.documented(o))
    return (
        f"differential: {len(outcomes)} cases, {len(diverging)} diverge "
        f"({documented} documented, {len(diverging) - documented} undocumented)"
    )


def _entry(entry: Entry | None) -> str:
    if entry is None:
        return "absent"
    if entry["type"] == "symlink":
        return f"symlink → {show(entry.get('target', ''))}"
    mode = f" mode {entry['mode']:04o}" if "mode" in entry else ""
    if entry["type"] != "file":
        return f"{entry['type']}{mode}"
    if "b64" in entry:
        data = base64.b64decode(entry["b64"])
        shown = repr(data) if len(data) <= 400 else repr(data[:400]) + f"… ({len(data)} bytes)"
        return f"file{mode}: {shown}"
    return f"file{mode}: {entry.get('size')} bytes, sha256 {entry.get('sha256', '')[:16]}…"


def _calls(case: Case) -> list[str]:
    lines = []
    for i, step in enumerate(case["steps"]):
        if step["op"] == "call":
            session = f" (session {step['session']})" if "session" in step else ""
            lines.append(f"{i}. `{step.get('name')}` {step.get('args')}{session}")
        else:
            lines.append(f"{i}. out of band: {step['op']} `{step.get('path')}`")
    return lines


def _weight(d: Divergence) -> int:
    """Smaller is a better example: short, and no escaped or invisible characters."""
    if d.step is not None:
        s = d.step
        size = len(s.args_text) + len(s.upstream["text"]) + len(s.ours["text"])
        return size + (500 if "\\u" in s.args_text else 0)
    assert d.file is not None
    calls = "".join(step.get("args", "") for step in d.file.case["steps"])
    plain = d.file.path.isascii() and d.file.path.isprintable()
    return 100_000 + len(calls) + len(d.file.case["steps"]) * 50 + (0 if plain else 500)


def _example(d: Divergence) -> list[str]:
    out: list[str] = []
    if d.step is not None:
        s = d.step
        up, ours, note = _excerpts(s.upstream["text"], s.ours["text"])
        policy = "policy on" if s.case["policy"] else "bare stack"
        out.append(f"Example: `{s.case['id']}` ({policy}), step {s.index}: `{s.name}` with")
        out += ["```json", s.args_text, "```"]
        out.append(
            f"- upstream (is_error={str(s.upstream['is_error']).lower()}, "
            f"code={s.upstream['code'] or '(none)'}){note}:"
        )
        out += ["  ```", f"  {up}", "  ```"]
        out.append(
            f"- dsh-fs (is_error={str(s.ours['is_error']).lower()}, "
            f"code={s.ours['code'] or '(none)'}):"
        )
        out += ["  ```", f"  {ours}", "  ```"]
        return out
    assert d.file is not None
    f = d.file
    out.append(f"Example: `{f.case['id']}`, path `{show(f.path)[1:-1]}` after the calls:")
    out += ["", *_calls(f.case), ""]
    out.append(f"- upstream: {_entry(f.upstream)}")
    out.append(f"- dsh-fs: {_entry(f.ours)}")
    return out


def _case_list(ids: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in sorted(set(ids)))


def _argument_strings(cases: dict[str, Case], upstream: dict[str, Result]) -> list[str]:
    """Every distinct upstream error text that is not an FS_* failure, with its code."""
    seen: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for case_id, result in upstream.items():
        for step in result["steps"]:
            if step is None or not step["is_error"]:
                continue
            code = step["code"]
            if code is not None and code.startswith("FS_"):
                continue
            seen[(step["text"], code)].append(case_id)
    rows = ["| upstream text (exact) | code | cases | first case |", "|---|---|---|---|"]
    for (text, code), ids in sorted(seen.items(), key=lambda kv: (str(kv[0][1]), kv[0][0])):
        cell = show(text).replace("|", "\\|")
        rows.append(f"| `{cell}` | {code or '(none)'} | {len(ids)} | `{sorted(ids)[0]}` |")
    return rows


ARGUMENT_RULES = """\
How upstream checks a call, in order (read from packages/core/tools `ToolRuntime`,
`json-schema.ts`, `schema.ts`, and packages/fs/tool-fs `parse*Args`; every string below
was also observed in the recorded run unless marked *unreachable*):

1. The runtime snapshots the arguments as lossless JSON. A `-0`/`-0.0`, or a number that
   overflows to infinity (`1e400`), anywhere in them:
   `tool execution arguments must be losslessly JSON-serializable` — no code (TypeError).
   This comes before the tool lookup.
2. Unknown tool: `unknown tool "<name>"` — code `UNKNOWN_TOOL` (ToolNotFoundError).
3. Schema validation (ToolArgsError, code `INVALID_ARGS`). All violations are collected and
   joined with `; ` after one `invalid arguments: ` prefix:
   - arguments not an object (array, string, number, null, boolean):
     `invalid arguments: "arguments" must be an object`
   - first, for each required property in declaration order that is absent:
     `missing required property "<name>"` — read: file_path; write: file_path, content;
     edit: file_path, old_string, new_string
   - then, for each declared property present, in declaration order (read: file_path,
     offset, limit; write: file_path, content; edit: file_path, old_string, new_string,
     replace_all): `"<name>" must be a string` (file_path, content, old_string,
     new_string), `"<name>" must be a number` (offset, limit: any non-number, including
     `"2"`, `true`, `null`, `[2]`), `"<name>" must be a boolean` (replace_all: including
     `"true"`, `1`, `0`, `null`)
   - *unreachable from JSON*: `"<name>" must be a finite JSON number`,
     `"arguments" must be a lossless JSON object` (step 1 catches those values first)
   - undeclared properties are ignored (the parameter object is open).
   Example: `{"file_path": 7, "offset": "x", "limit": false}` →
   `invalid arguments: "file_path" must be a string; "offset" must be a number; \
"limit" must be a number`; write `{"file_path": 7}` →
   `invalid arguments: missing required property "content"; "file_path" must be a string`.
4. The tool's own value checks — a plain Error, so **no code** — first failure only:
   - read: `file_path must be a non-empty string` (when `file_path.trim()` is empty:
     JavaScript white space incl. U+00A0, U+3000, newline, tab; not U+200B), then
     `offset must be a positive integer` (not an integer, or < 1; `2.0`, `1e3` are
     integers), `limit must be a positive integer`, `limit must be less than or equal to 2000`
   - write: `file_path must be a non-empty string`; then the sandbox-escalation pair
     (below)
   - edit: `file_path must be a non-empty string`, `old_string must be a non-empty string`,
     `old_string and new_string must differ` (compared before CRLF normalization); then
     the sandbox-escalation pair
   - sandbox-escalation pair (write and edit only; the keys are not in the schema without a
     sandboxing filesystem, so any JSON value gets here):
     `invalid escalation: sandbox_permissions requires a justification`,
     `invalid escalation: justification is only valid together with sandbox_permissions`,
     `invalid justification: expected a non-empty sentence`,
     `sandbox_permissions is not available in this composition \
(no sandboxing filesystem to escalate)`,
     and a non-string justification beside sandbox_permissions reaches `.trim()`:
     `justification.trim is not a function` (TypeError, no code).
5. Then the provider: an offset past the end is
   `offset <o> is out of range for "<p>" (<n> lines)` — `FS_NOT_FOUND` (JavaScript number
   formatting: `1e+21`, `9007199254740992` for 9007199254740993).
"""


def render_report(
    outcomes: list[CaseOutcome],
    decisions: Decisions,
    cases: dict[str, Case],
    upstream: dict[str, Result],
    meta: dict[str, str],
) -> str:
    lines: list[str] = ["# Differential report: dsh-fs against upstream tool-fs", ""]
    lines.append(f"**{summary_line(outcomes, decisions)}**")
    lines.append("")
    policy = sum(1 for o in outcomes if o.case["policy"])
    lines.append(
        f"Upstream recording: {', '.join(f'{k} {v}' for k, v in sorted(meta.items()))}. "
        f"Cases: {len(outcomes)} ({policy} with the observation policy, "
        f"{len(outcomes) - policy} on the bare stack). Generated by `make differential`; "
        "see README.md for how the recording was produced."
    )
    lines.append("")
    lines.append(
        "A case *diverges* when any call differs in `is_error`, text or code, or any path "
        "of the scratch root differs after the case (bytes, mode, type). It is *documented* "
        "when every cause is a deliberate difference (decisions.json). Calls that differ "
        "only because an earlier call of the same case already diverged are counted as "
        "`cascade` and shown with their case, not as causes."
    )
    lines.append("")

    by_class: dict[str, list[Divergence]] = defaultdict(list)
    cases_by_class: dict[str, set[str]] = defaultdict(set)
    for outcome in outcomes:
        for d in outcome.divergences:
            by_class[d.class_id].append(d)
            cases_by_class[d.class_id].add(outcome.case["id"])
    crashes = [o for o in outcomes if o.crash is not None]
    stale = [o for o in outcomes if o.stale_recording]

    order = [cls.id for cls in CLASSES] + [UNCLASSIFIED, CASCADE]
    lines += ["## Classes", "", "| class | kind | cases | items | what |", "|---|---|---|---|---|"]
    titles = {cls.id: cls.title for cls in CLASSES}
    for class_id in order:
        if class_id not in by_class:
            continue
        if class_id == CASCADE:
            kind = "consequence"
        elif class_id in decisions.by_class:
            kind = "deliberate"
        else:
            kind = "**undocumented**"
        title = titles.get(
            class_id,
            "no predicate explains it"
            if class_id == UNCLASSIFIED
            else "follows from an earlier divergence in the case",
        )
        lines.append(
            f"| `{class_id}` | {kind} | {len(cases_by_class[class_id])} | "
            f"{len(by_class[class_id])} | {title} |"
        )
    lines.append("")
    if stale:
        lines += [
            f"**{len(stale)} cases have no recording for the current generator** (their "
            "fingerprint changed): " + _case_list(o.case["id"] for o in stale),
            "",
        ]
    if crashes:
        lines += ["## Crashes", ""]
        lines += [f"- `{o.case['id']}`: {o.crash}" for o in crashes]
        lines.append("")

    for heading, deliberate in (("Undocumented classes", False), ("Deliberate classes", True)):
        section = [
            cls
            for cls in CLASSES
            if cls.id in by_class and (cls.id in decisions.by_class) == deliberate
        ]
        if not section:
            continue
        lines += [f"## {heading}", ""]
        for cls in section:
            items = by_class[cls.id]
            lines += [f"### `{cls.id}` — {cls.title}", "", cls.cause, ""]
            if deliberate:
                lines += [f"Decision: {decisions.by_class[cls.id]}", ""]
            lines.append(
                f"{len(cases_by_class[cls.id])} cases, {len(items)} items: "
                + _case_list(cases_by_class[cls.id])
            )
            lines.append("")
            step_items = [d for d in items if d.step is not None]
            file_items = [d for d in items if d.file is not None]
            for group in (step_items, file_items):
                if group:
                    lines += _example(min(group, key=_weight))
                    lines.append("")

    if UNCLASSIFIED in by_class:
        lines += ["## Unclassified items", ""]
        for d in by_class[UNCLASSIFIED]:
            lines += _example(d)
            lines.append("")

    if CASCADE in by_class:
        lines += ["## Cascades (consequences, by case)", ""]
        per_case: dict[str, list[str]] = defaultdict(list)
        for d in by_class[CASCADE]:
            if d.step is not None:
                per_case[d.step.case["id"]].append(f"step {d.step.index}")
            elif d.file is not None:
                per_case[d.file.case["id"]].append(f"path `{show(d.file.path)[1:-1]}`")
        for case_id, where in sorted(per_case.items()):
            lines.append(f"- `{case_id}`: {', '.join(where)}")
        lines.append("")

    lines += ["## Upstream argument errors", "", ARGUMENT_RULES]
    lines += [
        "Every distinct upstream error text without an FS_* code in the recorded run "
        "(`<cwd>` is the working directory):",
        "",
        *_argument_strings(cases, upstream),
        "",
    ]
    counts = Counter("diverges" if o.diverges else "same" for o in outcomes)
    lines.append(f"Totals: {counts['same']} cases identical, {counts['diverges']} diverging.")
    lines.append("")
    return "\n".join(lines)
