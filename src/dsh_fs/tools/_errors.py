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


RULE_REMEDY = "this path is off limits by the workspace's rules; leave it as it is"
"""The remedy of a refusal by a path rule (a `FS_SANDBOX_DENIED` whose details name it)."""


def message_with_remedy(error: FsError) -> str:
    """`error.message`, followed by `` — <remedy>`` when its code has one."""
    remedy = REMEDIES.get(error.code)
    if error.details.get("rule") is not None:
        remedy = RULE_REMEDY
    return error.message if remedy is None else f"{error.message} \u2014 {remedy}"
