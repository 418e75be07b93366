"""Rendering alone: the exact text for every read footer, write and edit."""

from __future__ import annotations

from dsh_fs.tools._render import render_edit, render_read, render_write
from dsh_fs.tools._values import EditValue, ReadValue, WriteValue

P = "/abs/file.py"


def test_a_whole_file_ends_with_the_end_of_file_footer() -> None:
    value = ReadValue(path=P, offset=1, lines=("first line", "second line"), total_lines=2)
    assert render_read(value) == (
        "<path>/abs/file.py</path>\n"
        "<type>file</type>\n"
        "<content>\n"
        "1: first line\n"
        "2: second line\n"
        "\n"
        "(End of file - total 2 lines)\n"
        "</content>"
    )


def test_remaining_lines_give_the_showing_footer_with_the_next_offset() -> None:
    value = ReadValue(path=P, offset=10, lines=("j", "k"), total_lines=30)
    assert render_read(value) == (
        "<path>/abs/file.py</path>\n<type>file</type>\n<content>\n"
        "10: j\n11: k\n\n"
        "(Showing lines 10-11 of 30. Use offset=12 to continue.)\n"
        "</content>"
    )


def test_the_byte_cap_gives_the_output_capped_footer() -> None:
    value = ReadValue(path=P, offset=3, lines=("c",), total_lines=9, output_capped=True)
    assert render_read(value) == (
        "<path>/abs/file.py</path>\n<type>file</type>\n<content>\n"
        "3: c\n\n"
        "(Output capped. Showing lines 3-3. Use offset=4 to continue.)\n"
        "</content>"
    )


def test_a_window_ending_at_the_last_line_is_end_of_file() -> None:
    value = ReadValue(path=P, offset=2, lines=("b", "c"), total_lines=3)
    assert render_read(value).endswith("2: b\n3: c\n\n(End of file - total 3 lines)\n</content>")


def test_an_empty_file_renders_the_footer_alone() -> None:
    value = ReadValue(path=P, offset=1, lines=(), total_lines=0)
    assert render_read(value) == (
        "<path>/abs/file.py</path>\n<type>file</type>\n<content>\n"
        "(End of file - total 0 lines)\n"
        "</content>"
    )


def test_empty_lines_keep_their_number_and_separator() -> None:
    value = ReadValue(path=P, offset=1, lines=("", "x", ""), total_lines=3)
    assert "\n1: \n2: x\n3: \n\n" in render_read(value)


def test_read_json_is_the_spec_shape_with_output_capped() -> None:
    value = ReadValue(path=P, offset=4, lines=("d", "e"), total_lines=5)
    assert value.to_json() == {
        "path": P,
        "offset": 4,
        "lines": [{"number": 4, "text": "d"}, {"number": 5, "text": "e"}],
        "total_lines": 5,
        "output_capped": False,
        "encoding": "utf-8",
        "bom": False,
    }


def test_a_created_file_renders_five_lines() -> None:
    value = WriteValue(path=P, operation="create", before=None, after="x")
    assert render_write(value) == (
        "<path>/abs/file.py</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    )
    assert value.to_json() == {"path": P, "operation": "create", "before": None, "after": "x"}


def test_an_updated_file_renders_five_lines() -> None:
    value = WriteValue(path=P, operation="update", before="a", after="b")
    assert render_write(value).splitlines() == [
        "<path>/abs/file.py</path>",
        "<type>file</type>",
        "<content>",
        "Updated file",
        "</content>",
    ]


def test_an_edit_renders_one_sentence() -> None:
    value = EditValue(path=P, before="a", after="b")
    assert render_edit(value) == "The file /abs/file.py has been updated successfully."
    assert value.to_json() == {
        "path": P,
        "before": "a",
        "after": "b",
        "replacements": 1,
        "replace_all": False,
    }


def test_a_replace_all_edit_says_all_occurrences_were_replaced() -> None:
    value = EditValue(path=P, before="aa", after="bb", replacements=2, replace_all=True)
    assert render_edit(value) == (
        "The file /abs/file.py has been updated. All occurrences were successfully replaced."
    )
