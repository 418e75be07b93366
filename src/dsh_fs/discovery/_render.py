"""Rendering of the discovery tools (SPEC §8.1): the exact text, a pure function of a value.

Where SPEC leaves the words open, they are upstream's: the headers, the sampled-glob and
capped-grep footers (upstream offers to save the complete result elsewhere; nothing is
saved here, so its "could not be saved" wording applies).
"""

from __future__ import annotations

from ._values import GlobValue, GrepValue, ListValue

__all__ = ["MAX_ENTRIES", "MAX_MATCHES", "MAX_PATHS", "render_glob", "render_grep", "render_list"]

MAX_PATHS = 100
"""Paths one glob shows."""
MAX_MATCHES = 250
"""Matching lines one grep shows."""
MAX_ENTRIES = 1000
"""Entries one list shows."""

_SUFFIXES = {"directory": "/", "symlink": "@"}


def render_glob(value: GlobValue) -> str:
    """One path per line; a capped result ends with the ``(Showing …)`` footer."""
    if value.total == 0:
        return "No files found"
    body = "\n".join(value.paths)
    if value.total <= len(value.paths):
        return body
    if value.entries_total == value.total:
        basis = "."  # one file per entry: the sample is the oldest-first head
    else:
        basis = (
            f", sampled across {value.entries_shown} of the {value.entries_total} top-level "
            "entries this pattern matched instead of taken in modification-time order."
        )
        if value.entries_shown < value.entries_total:
            basis += " Narrow path to inspect a specific subtree."
    return (
        f"{body}\n\n(Showing {len(value.paths)} of {value.total} paths{basis} "
        "The complete result could not be saved; narrow pattern or path to see more.)"
    )


def render_grep(value: GrepValue) -> str:
    """``Found …`` then the matches grouped by file; a capped result ends with a footer."""
    if value.total == 0:
        return "No matches found"
    capped = value.total > len(value.matches)
    if capped:
        header = f"Found {len(value.matches)} of {value.total} matches"
    else:
        header = f"Found {value.total} {'match' if value.total == 1 else 'matches'}"
    groups: list[str] = []
    current = None
    for match in value.matches:
        line = f"Line {match.line_number}: {match.line}"
        if match.truncated:
            line += " (line truncated)"
        if match.path != current:
            groups.append(match.path)
            current = match.path
        groups[-1] += "\n" + line
    text = header + "\n\n" + "\n\n".join(groups)
    if capped:
        text += (
            "\n\n(The complete result could not be saved; narrow pattern, path, or include "
            "to see more.)"
        )
    return text


def render_list(value: ListValue) -> str:
    """The ``<path>``, ``<type>directory</type>`` and ``<entries>`` block."""
    lines = [entry.name + _SUFFIXES.get(entry.type, "") for entry in value.entries]
    if value.total > len(value.entries):
        lines.append(
            f"(Showing {len(value.entries)} of {value.total} entries. Use glob with a pattern, "
            "or list a subdirectory, to see the rest.)"
        )
    body = "".join(line + "\n" for line in lines)
    return f"<path>{value.path}</path>\n<type>directory</type>\n<entries>\n{body}</entries>"
