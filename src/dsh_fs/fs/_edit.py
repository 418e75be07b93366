"""The literal edit every provider applies (SPEC §3): LF-normalized matching, byte-faithful.

Matching is defined on the text with every CRLF read as LF, without a leading byte order
mark: `read` never shows a BOM, so it is not part of the text a model can quote, and an
`old_string` that starts with U+FEFF does not match it (upstream behaves the same). The
replacement takes the file's dominant line ending, and every character outside the replaced
spans is kept as it was: the BOM, mixed endings, a missing final newline.

The common cases stay on `str.count`/`str.replace` (a file without CRLF, or an
`old_string` without line breaks, where normalized and original offsets coincide). Only an
`old_string` spanning a line break in a CRLF file uses a regular expression, whose pattern
accepts CRLF or LF at each break (`_lf_search`).

No match, or several without `replace_all`, raises the SPEC error with a diagnosis after its
first line (SPEC §8.2, `diagnosis`): the closest text and why it differs, or where each
match starts. The diagnosis only explains; what is applied is decided above, exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_fs.errors import FsError

from ._lf_search import crlf_tolerant_pattern, has_crlf
from ._types import FsEditRequest
from .messages import ambiguous_edit, edit_not_found

if TYPE_CHECKING:
    # The diagnosis (difflib included) is imported by the first miss it explains, not at
    # start-up: a server answering `initialize` never needs it.
    from .diagnosis import Diagnosis

__all__ = ["apply_edit", "dominant_line_ending", "safely_diagnosed"]

logger = logging.getLogger(__name__)

_BOM = "\ufeff"


def dominant_line_ending(text: str) -> str:
    """``"\\r\\n"`` when CRLF endings outnumber bare LF endings, else ``"\\n"``."""
    if "\r" not in text:
        return "\n"
    crlf = text.count("\r\n")
    if crlf == 0:
        return "\n"
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def apply_edit(text: str, edit: FsEditRequest, display_path: str) -> tuple[str, int]:
    """Apply `edit` to `text`; returns the new text and the number of replacements.

    Raises:
        FsError: `FS_EDIT_NOT_FOUND` when `old_string` does not occur, `FS_AMBIGUOUS_EDIT`
            when it occurs more than once and `replace_all` is false.
    """
    if text.startswith(_BOM):
        body, count = _apply(text[1:], edit, display_path)
        return _BOM + body, count
    return _apply(text, edit, display_path)


def _apply(text: str, edit: FsEditRequest, display_path: str) -> tuple[str, int]:
    old = edit.old_string.replace("\r\n", "\n")
    new = edit.new_string.replace("\r\n", "\n")
    crlf = has_crlf(text)
    if crlf and dominant_line_ending(text) == "\r\n":
        new = new.replace("\n", "\r\n")

    if not crlf or ("\n" not in old and "\r" not in old):
        # Offsets in the normalized text and in `text` coincide for every match.
        count = text.count(old)
        _check_count(count, text, edit, crlf, display_path)
        return text.replace(old, new, -1 if edit.replace_all else 1), count

    pattern = crlf_tolerant_pattern(old)
    if edit.replace_all:
        result, count = pattern.subn(lambda _m: new, text)
        _check_count(count, text, edit, crlf, display_path)
        return result, count
    matches = pattern.finditer(text)
    first = next(matches, None)
    if first is None:
        raise _not_found(text, edit, crlf, display_path)
    if next(matches, None) is not None:
        count = 2 + sum(1 for _ in matches)
        raise _ambiguous(text, edit, count, crlf, display_path)
    return text[: first.start()] + new + text[first.end() :], 1


def _check_count(count: int, text: str, edit: FsEditRequest, crlf: bool, display_path: str) -> None:
    if count == 0:
        raise _not_found(text, edit, crlf, display_path)
    if count > 1 and not edit.replace_all:
        raise _ambiguous(text, edit, count, crlf, display_path)


def _not_found(text: str, edit: FsEditRequest, crlf: bool, display_path: str) -> FsError:
    old = edit.old_string.replace("\r\n", "\n")
    new = edit.new_string.replace("\r\n", "\n")
    from .diagnosis import diagnose_not_found

    diagnosis = safely_diagnosed(lambda: diagnose_not_found(text, old, new, crlf=crlf))
    return edit_not_found(display_path, diagnosis.text, diagnosis.details)


def _ambiguous(
    text: str, edit: FsEditRequest, count: int, crlf: bool, display_path: str
) -> FsError:
    old = edit.old_string.replace("\r\n", "\n")
    from .diagnosis import diagnose_ambiguous

    diagnosis = safely_diagnosed(lambda: diagnose_ambiguous(text, old, count, crlf=crlf))
    return ambiguous_edit(display_path, count, diagnosis.text, diagnosis.details)


def safely_diagnosed(diagnose: Callable[[], Diagnosis]) -> Diagnosis:
    """The diagnosis, or none if it fails: a bug in the explanation must never replace the
    error it explains."""
    try:
        return diagnose()
    except Exception:
        logger.exception("edit diagnosis failed")
        from .diagnosis import Diagnosis

        return Diagnosis(text="")
