"""Rendering (SPEC §6): the exact text the model sees, a pure function of each value."""

from __future__ import annotations

from ._values import EditValue, ImageValue, ReadValue, WriteValue

__all__ = ["read_footer", "render_edit", "render_image", "render_read", "render_write"]


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
            f"{number}: {text}" for number, text in enumerate(value.lines, value.offset)
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


def render_image(value: ImageValue) -> str:
    """The text beside an image (a transport that carries images sends the image itself):
    ``<path>…</path>``, ``<type>image</type>``, ``<content>`` with the media type and size."""
    return (
        f"<path>{value.path}</path>\n<type>image</type>\n<content>\n"
        f"{value.mime_type}, {value.size} bytes\n</content>"
    )
