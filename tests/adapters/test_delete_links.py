"""``delete_file`` of a symbolic link removes the link and records the link (issue 22, item 11).

The target stays as it was, and so does what the session observed of it: an ``update_file`` of
the real, unchanged file needs no new read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import run_apply_patch

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "real.txt").write_text("one\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("real.txt")
    return tmp_path.resolve()


async def test_deleting_a_link_leaves_the_targets_observation_and_the_target(root: Path) -> None:
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": "link.txt"})
        assert not read.is_error
        deleted = await run_apply_patch(session, {"type": "delete_file", "path": "link.txt"})
        assert deleted == {"status": "completed", "output": f"Deleted file {root}/link.txt"}
        assert not (root / "link.txt").is_symlink()
        assert (root / "real.txt").read_text(encoding="utf-8") == "one\n"
        updated = await run_apply_patch(
            session, {"type": "update_file", "path": "real.txt", "diff": "@@\n-one\n+ONE\n"}
        )
        assert updated == {"status": "completed", "output": f"Updated file {root}/real.txt"}
        # The link's own name is now known absent: creating it anew needs no read.
        created = await run_apply_patch(
            session, {"type": "create_file", "path": "link.txt", "diff": "+new\n"}
        )
        assert created["status"] == "completed"
    assert (root / "real.txt").read_text(encoding="utf-8") == "ONE\n"
    assert (root / "link.txt").read_text(encoding="utf-8") == "new\n"
    assert not (root / "link.txt").is_symlink()
