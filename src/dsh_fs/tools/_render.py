"""Rendering (SPEC §6): the exact text the model sees, a pure function of each value, and
the remedies the tools append to a few error codes (keeping the code)."""

from __future__ import annotations

from dsh_fs.errors import FsError, FsErrorCode

from ._values import EditFilesValue, EditValue, ImageValue, ReadValue, WriteValue

__all__ = [
    "REMEDIES",
    "message_with_remedy",
    "read_footer",
    "render_edit",
    "render_edit_files",
    "render_image",
    "render_read",
    "render_write",
]


def read_footer(value: ReadValue) -> str:
    """The line after the numbered lines: why the window ends where it does."""
    start, end = value.offset, value.last_line
    if value.output_capped:
        return f"(Output capped. Showing lines {start}-{end}. Use offset={end + 1} to continue.)"
    if end < value.total_lines:
        return (
            f"(Showing lines {start}-{end} of {value.total_lines}. "
            f"Use offset={end + 1} to continue.)"
        )
    return f"(End of file - total {value.total_lines} lines)"


def render_read(value: ReadValue) -> str:
    """``<path>…</path>``, ``<type>file</type>``, and the numbered lines plus footer."""
    footer = read_footer(value)
    if value.lines:
        numbered = "\n".join(
            [f"{number}: {text}" for number, text in enumerate(value.lines, value.offset)]
        )
        body = f"{numbered}\n\n{footer}"
    else:
        body = footer
    return f"<path>{value.path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def render_write(value: WriteValue) -> str:
    """Five lines: path, type, and ``Created file`` or ``Updated file`` inside content."""
    outcome = "Created file" if value.operation == "create" else "Updated file"
    return f"<path>{value.path}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>"


def render_edit(value: EditValue) -> str:
    """One sentence; the replace_all variant says every occurrence was replaced."""
    if value.replace_all:
        return (
            f"The file {value.path} has been updated. All occurrences were successfully replaced."
        )
    return f"The file {value.path} has been updated successfully."


def render_edit_files(value: EditFilesValue) -> str:
    """``Edited <k> files (<m> replacements)``, then ``- <p>`` for each file (SPEC §13)."""
    head = f"Edited {len(value.files)} files ({value.replacements} replacements)"
    return "\n".join([head, *(f"- {file.path}" for file in value.files)])


def render_image(value: ImageValue) -> str:
    """The text beside an image (a transport that carries images sends the image itself):
    ``<path>…</path>``, ``<type>image</type>``, ``<content>`` with the media type and size."""
    return (
        f"<path>{value.path}</path>\n<type>image</type>\n<content>\n"
        f"{value.mime_type}, {value.size} bytes\n</content>"
    )


REMEDIES: dict[FsErrorCode, str] = {
    FsErrorCode.STALE_VERSION: "re-read the file, then retry",
    FsErrorCode.NOT_OBSERVED: "read the file, then retry",
    FsErrorCode.SANDBOX_DENIED: "use a path inside the workspace, or ask the user for access",
}
"""What the model should do next, by code; appended after an em dash (U+2014)."""


RULE_REMEDY = "this path is off limits by the workspace's rules; leave it as it is"
"""The remedy of a refusal by a path rule (a `FS_SANDBOX_DENIED` whose details name it)."""


def message_with_remedy(error: FsError) -> str:
    """`error.message`, followed by `` — <remedy>`` when its code has one."""
    remedy = REMEDIES.get(error.code)
    if error.details.get("rule") is not None:
        remedy = RULE_REMEDY
    return error.message if remedy is None else f"{error.message} \u2014 {remedy}"
