"""`read_decoded_at(..., change=...)` through a wrapper: a change set's staging read is
checked as the change it is made for (the access of the primitive that will publish it),
then as the read it is, and the change is forwarded to the wrapped provider. Without a
change it is checked as its row says (`test_wrapper.py`)."""

from __future__ import annotations

from typing import Literal

import pytest

from dsh_fs.fs import PRIMITIVES, FsAccess, FsTarget, FsVersion, WrapperFileSystem

from .test_wrapper import TARGET, Recorder, Watching

pytestmark = pytest.mark.anyio

Change = Literal["edit", "write", "delete", "move"]

PUBLISHED_BY: dict[Change, FsAccess] = {
    "edit": PRIMITIVES["edit_text"].targets[0],
    "write": PRIMITIVES["write_text"].targets[0],
    "delete": PRIMITIVES["delete"].targets[0],
    "move": PRIMITIVES["move"].targets[0],
}


class Changes(Recorder):
    """Remembers the change each `read_decoded_at` was made for."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[Change | None] = []

    async def read_decoded_at(
        self, target: FsTarget, version: FsVersion, *, change: Change | None = None
    ) -> None:
        self.changes.append(change)


@pytest.mark.parametrize("change", sorted(PUBLISHED_BY))
async def test_a_read_for_a_change_is_checked_as_that_change_then_as_a_read(
    change: Change,
) -> None:
    provider = Changes()
    wrapper = Watching(provider)
    await wrapper.read_decoded_at(TARGET, FsVersion("v"), change=change)
    (read,) = PRIMITIVES["read_decoded_at"].targets
    assert wrapper.checked == [(PUBLISHED_BY[change], TARGET), (read, TARGET)]
    assert provider.changes == [change]


async def test_a_refused_change_never_reaches_the_provider() -> None:
    class ReadOnly(WrapperFileSystem):
        def check(self, access: FsAccess, target: FsTarget) -> None:
            if access.verb != "read":
                raise RuntimeError(f"refused {access.verb}")

    provider = Changes()
    fs = ReadOnly(provider)
    await fs.read_decoded_at(TARGET, FsVersion("v"))
    with pytest.raises(RuntimeError, match="refused edit"):
        await fs.read_decoded_at(TARGET, FsVersion("v"), change="edit")
    assert provider.changes == [None]
