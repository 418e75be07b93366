"""Path rules (SPEC §10): a denied path does not exist for any tool, dialect or discovery
(both engines, through links); a protected path reads and is found but never changes; the
rules speak before the policy; `.git/` is protected by default."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from dsh_fs import Rules, Workspace
from dsh_fs.adapters import run_apply_patch
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.fs import PathRules
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = (tmp_path / "w").resolve()
    (top / ".git").mkdir(parents=True)
    (top / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (top / "sub").mkdir()
    (top / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (top / "sub" / ".env.local").write_text("SECRET=2\n", encoding="utf-8")
    (top / ".env.example").write_text("SECRET=\n", encoding="utf-8")
    (top / "app.py").write_text("print('SECRET')\n", encoding="utf-8")
    (top / "innocent").symlink_to(".env")
    (tmp_path / "outside-secret").write_text("SECRET=3\n", encoding="utf-8")
    return top


RULES = Rules(deny=[".env*", "!.env.example"], protect=["*.py"])


@pytest.fixture(params=["ripgrep", "pure"])
async def session(request: pytest.FixtureRequest, root: Path) -> AsyncIterator[Session]:
    discovery = DiscoveryConfig(native=request.param == "ripgrep")
    async with Workspace.sandbox(root, rules=RULES, discovery=discovery) as workspace:
        yield workspace.session()


async def test_a_denied_file_reads_as_absent_even_through_a_link(
    session: Session, root: Path
) -> None:
    for path in (".env", "sub/.env.local", "innocent"):
        result = await session.call("read", {"file_path": path})
        assert (result.code, result.text) == (
            "FS_NOT_FOUND",
            f'Error: cannot read "{root}/{path}": not found',
        )
    assert not (await session.call("read", {"file_path": ".env.example"})).is_error


async def test_discovery_never_shows_a_denied_path_on_either_engine(session: Session) -> None:
    listing = await session.call("list", {})
    assert listing.text.splitlines()[3:-1] == [".env.example", ".git/", "app.py", "sub/"]
    found = await session.call("glob", {"pattern": "**/*env*"})
    assert found.text == ".env.example"
    grep = await session.call("grep", {"pattern": "SECRET"})
    assert ".env" not in grep.text.replace(".env.example", "")
    assert "app.py" in grep.text
    inside = await session.call("list", {"path": "sub"})
    assert inside.text.splitlines()[3:-1] == []


async def test_every_mutation_of_a_denied_path_is_refused_by_its_rule(
    session: Session, root: Path
) -> None:
    calls = [
        ("write", {"file_path": ".env", "content": "x"}),
        ("edit", {"file_path": ".env", "old_string": "SECRET", "new_string": "X"}),
        ("delete", {"file_path": ".env"}),
        ("move", {"source_path": "app.py", "destination_path": "new.env"}),
        ("move", {"source_path": "app.py", "destination_path": ".env.prod"}),
        # From a denied path too (it answered "not found"), there or not: the rule matches
        # the path, so the answer tells nothing about what is there.
        ("move", {"source_path": ".env", "destination_path": "b.txt"}),
        ("move", {"source_path": ".env.missing", "destination_path": "b.txt"}),
        ("delete", {"file_path": ".env.missing"}),
        ("mkdir", {"path": ".env.d"}),
    ]
    for name, args in calls:
        result = await session.call(name, args)
        assert result.code == "FS_SANDBOX_DENIED", (name, result.text)
        assert 'denied by rule ".env*"' in result.text or "protected by rule" in result.text
    assert (root / ".env").read_text(encoding="utf-8") == "SECRET=1\n"
    assert not (root / ".env.prod").exists()
    assert not (root / "b.txt").exists()


async def test_the_rule_speaks_before_the_policy(session: Session, root: Path) -> None:
    refused = await session.call("write", {"file_path": ".env", "content": "x"})
    assert refused.text == (
        f'Error: cannot write "{root}/.env": denied by rule ".env*" — this path is off limits '
        "by the workspace's rules; leave it as it is"
    )
    edit = await session.call(
        "edit", {"file_path": "app.py", "old_string": "print", "new_string": "x"}
    )
    assert edit.text.startswith(f'Error: cannot edit "{root}/app.py": protected by rule "*.py"')


async def test_a_protected_file_reads_and_is_found_but_never_changes(
    session: Session, root: Path
) -> None:
    assert not (await session.call("read", {"file_path": "app.py"})).is_error
    assert "app.py" in (await session.call("glob", {"pattern": "*.py"})).text
    for name, args in [
        ("write", {"file_path": "app.py", "content": "x"}),
        ("delete", {"file_path": "app.py"}),
        ("move", {"source_path": "app.py", "destination_path": "b.txt"}),
        ("write", {"file_path": "new.py", "content": "x"}),
    ]:
        result = await session.call(name, args)
        assert result.code == "FS_SANDBOX_DENIED", (name, result.text)
    assert (root / "app.py").read_text(encoding="utf-8") == "print('SECRET')\n"
    assert not (root / "new.py").exists()


async def test_git_is_protected_by_default(session: Session, root: Path) -> None:
    assert not (await session.call("read", {"file_path": ".git/config"})).is_error
    for name, args in [
        ("edit", {"file_path": ".git/config", "old_string": "core", "new_string": "x"}),
        ("write", {"file_path": ".git/hooks/pre-commit", "content": "rm -rf /"}),
        ("mkdir", {"path": ".git/hooks"}),
        ("delete", {"file_path": ".git"}),
        ("move", {"source_path": ".git", "destination_path": "git"}),
    ]:
        result = await session.call(name, args)
        assert result.code == "FS_SANDBOX_DENIED", (name, result.text)
        assert 'protected by rule ".git/"' in result.text
    assert sorted(p.name for p in (root / ".git").iterdir()) == ["config"]


async def test_the_dialects_obey_the_rules(session: Session, root: Path) -> None:
    created = await run_apply_patch(
        session, {"type": "create_file", "path": ".env.new", "diff": "+x\n"}
    )
    assert created["status"] == "failed"
    assert "denied by rule" in created["output"]
    assert not (root / ".env.new").exists()


async def test_no_default_rules_leaves_git_writable(root: Path) -> None:
    async with Workspace.sandbox(root, rules=Rules(default_rules=False)) as ws:
        session = ws.session()
        result = await session.call("write", {"file_path": ".git/x", "content": "y\n"})
    assert not result.is_error
    async with Workspace.sandbox(root, rules=None) as ws:
        assert not (await ws.session().call("read", {"file_path": ".env"})).is_error


def test_an_invalid_pattern_is_a_clear_error_at_start(root: Path) -> None:
    with pytest.raises(ValueError, match=r"invalid deny pattern '!'"):
        Workspace.sandbox(root, rules=Rules(deny=["!"]))


def test_deny_wins_over_protect_and_a_re_include_stays_within_its_kind() -> None:
    rules = PathRules.compile(Rules(deny=["secret/", "*.key"], protect=["*.key", "!a.key"]), ["/w"])
    assert rules.match(["/w/x.key"]) is not None
    assert rules.match(["/w/x.key"]).kind == "deny"  # type: ignore[union-attr]
    assert rules.match(["/w/secret/public.txt"]).pattern == "secret/"  # type: ignore[union-attr]
    assert rules.match(["/w/ok.txt"]) is None
    assert rules.match(["/elsewhere/x.key"]) is None


def test_only_a_deny_rule_hides_a_path_from_a_listing_a_walk_or_a_search() -> None:
    rules = PathRules.compile(Rules(deny=["secret/"], protect=["*.py"]), ["/w"])
    assert rules.denied(["/w/secret/a.txt", "/w/secret/a.txt"]) == rules.match(["/w/secret/a"])
    assert rules.denied(["/w/app.py"]) is None  # protected: shown
    assert rules.match(["/w/app.py"]) is not None
    assert not rules.denies_nothing
    protect_only = PathRules.compile(Rules(protect=["*.py"]), ["/w"])
    assert protect_only.denies_nothing
    assert protect_only.denied(["/w/app.py"]) is None


async def test_with_the_default_rules_alone_every_entry_is_listed_and_found(root: Path) -> None:
    async with Workspace.sandbox(root) as ws:  # `.git/` protected, nothing denied
        session = ws.session()
        listed = await session.call("list", {})
        found = await session.call("glob", {"pattern": "**/*"})
    assert listed.value is not None
    assert {".git", ".env", "innocent", "sub"} <= {e["name"] for e in listed.value["entries"]}
    assert {".env", "sub/.env.local", "app.py"} <= set(found.text.splitlines())


@pytest.mark.parametrize(
    ("deny", "last", "decided"),
    [
        (["*.key", "d/"], "x.key", "d/"),  # the shallowest directory decides, as git says
        (["*.key"], "x.key", "*.key"),
        (["*.key"], "x.txt", None),
    ],
)
def test_a_path_of_many_components_is_matched_in_a_few_passes_with_gits_answer(
    deny: list[str], last: str, decided: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Matching each of a path's 20,000 depths in turn took 13 s of the event loop for one
    # read of a 40 kB path (every workspace has a rule: `.git/` is protected by default).
    rules = PathRules.compile(Rules(deny=deny, default_rules=False), ["/w"])
    calls = [0]
    real = GitIgnoreSpecPattern.match_file

    def counted(self: GitIgnoreSpecPattern, file: str) -> object:
        calls[0] += 1
        return real(self, file)

    monkeypatch.setattr(GitIgnoreSpecPattern, "match_file", counted)
    path = "/w/" + "/".join(["d"] * 20_000) + "/" + last
    found = rules.match([path])
    assert (found.pattern if found is not None else None) == decided
    assert calls[0] <= 200


_PATTERNS = ["foo", "foo/", "/foo", "/a/b", "*.py", "**/x", "a/**", "a/**/b", "*.log/", "d/"]
_PATTERNS += ["!foo", "!*.py", "!a/b", ".git/", "[ab]*", "/a/*/c"]
_NAMES = ["foo", "a", "b", "c", "x", "d", "q.py", "z.log", ".git", "ab"]


@given(
    patterns=st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=4, unique=True),
    parts=st.lists(st.sampled_from(_NAMES), min_size=1, max_size=7),
)
def test_the_rules_decide_as_matching_every_depth_in_turn(
    patterns: list[str], parts: list[str]
) -> None:
    rules = PathRules.compile(Rules(deny=patterns, default_rules=False), ["/w"])
    found = rules.match(["/w/" + "/".join(parts)])
    compiled = [GitIgnoreSpecPattern(text) for text in patterns]
    expected = None
    for depth in range(1, len(parts) + 1):  # git's way, one depth after another
        head = "/".join(parts[:depth])
        for candidate in (head + "/",) if depth < len(parts) else (head, head + "/"):
            decided = None
            for text, pattern in zip(patterns, compiled, strict=True):
                if pattern.include is not None and pattern.match_file(candidate) is not None:
                    decided = text if pattern.include else None
            if decided is not None and expected is None:
                expected = decided
    assert (found.pattern if found is not None else None) == expected
