"""Denied paths and the two discovery engines (SPEC §10): a denied path never shows in grep,
glob or list on the ripgrep engine or the pure one, also through a link into it or a link
as the searched directory; and ripgrep is told the denied paths (``--glob=!LINE``), so it
does not even open them (the wrapper's filter after it is the guarantee, this the economy)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Rules, Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.fs import FsGlobQuery, FsGrepQuery, PathRules
from dsh_fs.providers import LocalFileSystem
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

RULES = Rules(deny=["secrets/", "*.pem", "/top/only.txt"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = (tmp_path / "w").resolve()
    for name in ("secrets", "src/secrets", "top", "src/top", "keys"):
        (top / name).mkdir(parents=True)
    (top / "secrets" / "token.txt").write_text("NEEDLE secret\n", encoding="utf-8")
    (top / "src" / "secrets" / "nested.txt").write_text("NEEDLE nested\n", encoding="utf-8")
    (top / "keys" / "server.pem").write_text("NEEDLE pem\n", encoding="utf-8")
    (top / "top" / "only.txt").write_text("NEEDLE anchored\n", encoding="utf-8")
    (top / "src" / "top" / "only.txt").write_text("NEEDLE not anchored here\n", encoding="utf-8")
    (top / "src" / "app.txt").write_text("NEEDLE app\n", encoding="utf-8")
    (top / "link-to-secrets").symlink_to(top / "secrets")
    (top / "src" / "key-link.txt").symlink_to(top / "keys" / "server.pem")
    return top


SHOWN = {"src/app.txt", "src/top/only.txt"}
"""The files that are not denied (by path, or through their real path)."""


@pytest.fixture(params=["ripgrep", "pure"])
async def session(request: pytest.FixtureRequest, root: Path) -> AsyncIterator[Session]:
    discovery = DiscoveryConfig(native=request.param == "ripgrep")
    async with Workspace.sandbox(root, rules=RULES, discovery=discovery) as workspace:
        yield workspace.session()


async def test_grep_never_shows_a_denied_file_or_line_on_either_engine(
    session: Session, root: Path
) -> None:
    content = await session.call("grep", {"pattern": "NEEDLE", "output_mode": "content"})
    names = await session.call("grep", {"pattern": "NEEDLE"})
    for text in (content.text, names.text):
        for hidden in ("secret", "nested", "pem", "anchored", "token", "server", "key-link"):
            assert hidden not in text.replace("not anchored here", ""), text
    assert "src/top/only.txt" in names.text
    assert "src/app.txt" in names.text


async def test_glob_and_list_never_name_a_denied_path_on_either_engine(
    session: Session, root: Path
) -> None:
    found = await session.call("glob", {"pattern": "**/*"})
    assert set(found.text.splitlines()) == SHOWN
    listing = await session.call("list", {"path": "src"})
    assert "secrets" not in listing.text
    assert "key-link" not in listing.text
    assert "app.txt" in listing.text


async def test_a_link_into_a_denied_directory_is_no_way_in_on_either_engine(
    session: Session, root: Path
) -> None:
    grep = await session.call("grep", {"pattern": "NEEDLE", "path": "link-to-secrets"})
    glob = await session.call("glob", {"pattern": "*", "path": "link-to-secrets"})
    read = await session.call("read", {"file_path": "link-to-secrets/token.txt"})
    assert grep.code == glob.code == read.code == "FS_NOT_FOUND"
    assert "NEEDLE" not in grep.text + glob.text + read.text


def test_the_exclusions_never_say_more_than_the_rules() -> None:
    rules = PathRules.compile(RULES, ["/w"])
    assert rules.excluded_below("/w") == tuple(RULES.deny)
    # Below a subdirectory: unanchored patterns as they are, an anchored one rebased where
    # its components name the subdirectory, dropped where they cannot.
    assert rules.excluded_below("/w/top") == ("secrets/", "*.pem", "/only.txt")
    assert rules.excluded_below("/w/src") == ("secrets/", "*.pem")
    assert rules.excluded_below("/elsewhere") == ()
    # A re-include or a character gitignore implementations read differently: none given.
    assert PathRules.compile(Rules(deny=["*.pem", "!a.pem"]), ["/w"]).excluded_below("/w") == ()
    assert PathRules.compile(Rules(deny=["[ab].txt"]), ["/w"]).excluded_below("/w") == ()


async def test_ripgrep_itself_skips_what_it_is_told_is_denied(root: Path) -> None:
    # The local provider filters nothing by rules: what it reports is what ripgrep read.
    fs = LocalFileSystem(root)
    target = await fs.resolve(".")
    told = PathRules.compile(RULES, [str(root)]).excluded_below(str(root))
    for excluded, expected in (
        ((), {"secrets/token.txt", "src/secrets/nested.txt", "keys/server.pem", "top/only.txt"}),
        (told, set()),
    ):
        query = FsGrepQuery(pattern="NEEDLE", excluded=excluded)
        grep = fs.native_grep(target, query)
        glob = fs.native_glob(target, FsGlobQuery(pattern="**/*", excluded=excluded))
        if grep is None or glob is None:
            pytest.skip("no rg binary")
        async with grep as batches:
            read = {hit.path async for batch in batches for hit in batch}
        async with glob as listed:
            names = {path async for batch in listed for path in batch}
        assert read - SHOWN == expected
        assert names - SHOWN == expected
        assert read >= SHOWN
        assert names >= SHOWN


async def test_ripgrep_run_in_a_parent_gets_the_exclusions_rebased(root: Path) -> None:
    # A parent's ignore file makes ripgrep run there, the searched directory a lead path.
    (root / ".ignore").write_text("no-such-name\n", encoding="utf-8")
    fs = LocalFileSystem(root)
    target = await fs.resolve("src")
    grep = fs.native_grep(target, FsGrepQuery(pattern="NEEDLE", excluded=("secrets/",)))
    anchored = fs.native_grep(target, FsGrepQuery(pattern="NEEDLE", excluded=("/top/only.txt",)))
    if grep is None or anchored is None:
        pytest.skip("no rg binary")
    async with grep as batches:
        unanchored_read = {hit.path async for batch in batches for hit in batch}
    async with anchored as batches:
        anchored_read = {hit.path async for batch in batches for hit in batch}
    assert unanchored_read == {"app.txt", "top/only.txt"}
    assert anchored_read == {"app.txt", "secrets/nested.txt"}


PATTERNS = [
    "*.log", "/build", "build/", "docs/*.md", "**/cache", "a/**/z.txt", "?.txt", "/src/gen/",
    "deep/er/", "x*y", "*.tar.gz", "node_modules", "/*.cfg", "src/**", "**/tmp/**", "n?te*",
]  # fmt: skip


NAMES = [
    "a.log", "build/x.txt", "src/build/y.txt", "docs/r.md", "docs/sub/r.md", "src/cache/c",
    "a/b/z.txt", "a/b/c/z.txt", "a/z.txt", "q.txt", "src/q.txt", "src/gen/g.py",
    "src/deep/er/f", "deep/er/f", "xay", "a/b/xzy", "p.tar.gz", "node_modules/m.js",
    "src/node_modules/m.js", "s.cfg", "src/s.cfg", "src/main.py", "a/b/tmp/t", "note.md",
    "a/b/notes", "a/b/n1te", "src/a.log",
]  # fmt: skip


@pytest.fixture
def many(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    for name in NAMES:
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("NEEDLE\n", encoding="utf-8")
    return top


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("where", ["", "src", "a/b"])
async def test_ripgrep_never_skips_a_path_the_rules_do_not_deny(
    many: Path, pattern: str, where: str
) -> None:
    rules = PathRules.compile(Rules(deny=[pattern], default_rules=False), [str(many)])
    fs = LocalFileSystem(many)
    target = await fs.resolve(where or ".")
    excluded = rules.excluded_below(str(target.target_key))
    prefix = f"{where}/" if where else ""
    allowed = {
        name.removeprefix(prefix)
        for name in NAMES
        if name.startswith(prefix) and rules.match((f"{many}/{name}",)) is None
    }
    glob = fs.native_glob(target, FsGlobQuery(pattern="**/*", excluded=excluded))
    grep = fs.native_grep(target, FsGrepQuery(pattern="NEEDLE", excluded=excluded))
    if glob is None or grep is None:
        pytest.skip("no rg binary")
    async with glob as listed:
        names_listed = {path async for batch in listed for path in batch}
    async with grep as batches:
        names_read = {hit.path async for batch in batches for hit in batch}
    assert names_listed >= allowed, (excluded, allowed - names_listed)
    assert names_read >= allowed, (excluded, allowed - names_read)
