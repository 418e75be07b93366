"""Remedies: the recovery the tools append to a few error codes, keeping the code (SPEC §6)."""

from __future__ import annotations

from dsh_fs.errors import FsError, FsErrorCode

__all__ = ["REMEDIES", "message_with_remedy"]

REMEDIES: dict[FsErrorCode, str] = {
    FsErrorCode.STALE_VERSION: "re-read the file, then retry",
    FsErrorCode.NOT_OBSERVED: "read the file, then retry",
    FsErrorCode.SANDBOX_DENIED: "use a path inside the workspace, or ask the user for access",
}
"""What the model should do next, by code; appended after an em dash (U+2014)."""


def message_with_remedy(error: FsError) -> str:
    """`error.message`, followed by `` — <remedy>`` when its code has one."""
    remedy = REMEDIES.get(error.code)
    return error.message if remedy is None else f"{error.message} \u2014 {remedy}"
