"""`WrapperFileSystem`: one row of `PRIMITIVES` per `FileSystem` primitive, each forwarded
exactly once (always with `capture`), its targets shown to the hooks as the row says."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    PRIMITIVES,
    FileSystem,
    FsAccess,
    FsCapture,
    FsDecoded,
    FsDirEntry,
    FsDirListing,
    FsEditRequest,
    FsEncoding,
    FsFileType,
    FsGlobQuery,
    FsGrepQuery,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsTouch,
    FsVersion,
    FsWalkEntry,
    WrapperFileSystem,
)

pytestmark = pytest.mark.anyio


def primitives() -> set[str]:
    """Every public method of the contract (properties and attributes are not primitives)."""
    return {
        name
        for name, member in vars(FileSystem).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }


def test_every_primitive_of_the_contract_has_a_row_and_every_row_a_primitive() -> None:
    assert set(PRIMITIVES) == primitives()


def test_the_wrapper_defines_every_primitive_itself() -> None:
    # Not inherited from the contract's defaults: a default built from other primitives
    # (move's copy, list_dir_first's cut) would bypass the wrapped provider's own.
    missing = {name for name in primitives() if name not in vars(WrapperFileSystem)}
    assert missing == set()


def test_each_row_names_one_access_per_target_argument() -> None:
    for name, row in PRIMITIVES.items():
        parameters = inspect.signature(getattr(FileSystem, name)).parameters.values()
        # A sequence of targets (`read_many`) is one argument, each of its targets touched
        # as the row's one access says.
        targets = [p.name for p in parameters if p.annotation in ("FsTarget", "Sequence[FsTarget]")]
        if row.resolves:
            # `resolve` and `walk_target` make targets (checked where they are used); `lstat`
            # checks the link its path names.
            assert len(row.targets) == (1 if name == "lstat" else 0), name
        else:
            assert len(row.targets) == len(targets), name


TARGET = FsTarget(target_key=FsTargetKey("/k/a"), display_path="/d/a")
OTHER = FsTarget(target_key=FsTargetKey("/k/b"), display_path="/d/b")
CAPTURE: Any = object()


class Recorder(FileSystem):
    """A provider that only records what reached it, with every keyword."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _note(self, name: str, **kwargs: Any) -> None:
        self.calls.append((name, kwargs))

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        self._note("resolve", cwd=cwd)
        return TARGET

    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        self._note("walk_target")
        return TARGET

    async def process_path(self, target: FsTarget) -> str:
        self._note("process_path")
        return "/k/a"

    async def file_url(self, target: FsTarget) -> str:
        self._note("file_url")
        return "file:///k/a"

    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        self._note("contains")
        return True

    async def stat(self, target: FsTarget) -> None:
        self._note("stat")

    async def lstat(self, path: str, cwd: str | None = None) -> None:
        self._note("lstat", cwd=cwd)

    async def read_text(self, target: FsTarget) -> str:
        self._note("read_text")
        return ""

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        self._note("read_decoded")
        return FsDecoded(text="", encoding=FsEncoding(codec="cp1252"))

    async def read_decoded_at(
        self,
        target: FsTarget,
        version: FsVersion,
        *,
        change: Literal["edit", "write", "delete", "move"] | None = None,
    ) -> None:
        self._note("read_decoded_at")

    async def read_small(self, target: FsTarget, max_bytes: int) -> None:
        self._note("read_small")

    @asynccontextmanager
    async def _chunks(self) -> AsyncIterator[AsyncIterator[str]]:
        async def none() -> AsyncIterator[str]:
            nothing: tuple[str, ...] = ()
            for chunk in nothing:
                yield chunk

        yield none()

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        self._note("stream_text")
        return self._chunks()

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        self._note("stream_text_from", start=start)
        return super().stream_text_from(target, start)

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        self._note("read_bytes")
        return b""

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        self._note("read_head")
        return b""

    async def read_many(self, targets: Sequence[FsTarget], max_bytes: int) -> list[bytes | FsError]:
        self._note("read_many")
        return [b"" for _ in targets]

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        self._note("list_dir")
        return []

    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        self._note("list_dir_first")
        return FsDirListing(entries=(), total=0)

    @asynccontextmanager
    async def _batches(self) -> AsyncIterator[AsyncIterator[list[Any]]]:
        async def none() -> AsyncIterator[list[Any]]:
            nothing: tuple[list[Any], ...] = ()
            for batch in nothing:
                yield batch

        yield none()

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        self._note("walk")
        return self._batches()

    def native_grep(self, root: FsTarget, query: FsGrepQuery) -> Any:
        self._note("native_grep")
        return self._batches()

    def native_glob(self, root: FsTarget, query: FsGlobQuery) -> Any:
        self._note("native_glob")
        return self._batches()

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: Any = None,
        *,
        capture: FsCapture | None = None,
    ) -> Any:
        self._note("write_text", capture=capture)

    async def edit_text(
        self, target: FsTarget, edit: Any, expected: Any = None, *, capture: FsCapture | None = None
    ) -> Any:
        self._note("edit_text", capture=capture)

    async def delete(
        self, target: FsTarget, expected: Any = None, *, capture: FsCapture | None = None
    ) -> Any:
        self._note("delete", capture=capture)

    async def restore(
        self,
        target: FsTarget,
        pre_image: Any,
        expected: Any,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        self._note("restore", capture=capture, mode=mode)
        return None

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> Any:
        self._note("mkdir", capture=capture)

    async def delete_link(self, target: FsTarget) -> None:
        self._note("delete_link")

    async def delete_dir(self, target: FsTarget) -> None:
        self._note("delete_dir")

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: Any = None,
        replace: Any = None,
        *,
        capture: FsCapture | None = None,
    ) -> Any:
        self._note("move", capture=capture)

    def batch(self) -> AbstractAsyncContextManager[None]:
        self._note("batch")
        return super().batch()

    async def aclose(self) -> None:
        self._note("aclose")


class Watching(WrapperFileSystem):
    """A wrapper that lets everything through and remembers what its hook was asked."""

    def __init__(self, wrapped: FileSystem) -> None:
        super().__init__(wrapped)
        self.checked: list[tuple[FsAccess, FsTarget]] = []

    def check(self, access: FsAccess, target: FsTarget) -> None:
        self.checked.append((access, target))


async def call(fs: FileSystem, name: str) -> None:
    """Call primitive `name` of `fs` once, with `CAPTURE` wherever it takes one."""
    edit = FsEditRequest(old_string="a", new_string="b")
    query_grep = FsGrepQuery(pattern="x")
    query_glob = FsGlobQuery(pattern="*")
    simple: dict[str, Callable[[], Any]] = {
        "resolve": lambda: fs.resolve("a", "d"),
        "walk_target": lambda: fs.walk_target(TARGET, "a"),
        "process_path": lambda: fs.process_path(TARGET),
        "file_url": lambda: fs.file_url(TARGET),
        "contains": lambda: fs.contains(TARGET, OTHER),
        "stat": lambda: fs.stat(TARGET),
        "lstat": lambda: fs.lstat("a", "d"),
        "read_text": lambda: fs.read_text(TARGET),
        "read_decoded": lambda: fs.read_decoded(TARGET),
        "read_decoded_at": lambda: fs.read_decoded_at(TARGET, FsVersion("v")),
        "read_small": lambda: fs.read_small(TARGET, 10),
        "read_bytes": lambda: fs.read_bytes(TARGET, 10),
        "read_head": lambda: fs.read_head(TARGET, 10),
        "read_many": lambda: fs.read_many([TARGET], 10),
        "list_dir": lambda: fs.list_dir(TARGET),
        "list_dir_first": lambda: fs.list_dir_first(TARGET, 5),
        "write_text": lambda: fs.write_text(TARGET, "x", capture=CAPTURE),
        "edit_text": lambda: fs.edit_text(TARGET, edit, capture=CAPTURE),
        "delete": lambda: fs.delete(TARGET, capture=CAPTURE),
        "restore": lambda: fs.restore(TARGET, None, None, mode=0o600, capture=CAPTURE),
        "mkdir": lambda: fs.mkdir(TARGET, capture=CAPTURE),
        "delete_link": lambda: fs.delete_link(TARGET),
        "delete_dir": lambda: fs.delete_dir(TARGET),
        "move": lambda: fs.move(TARGET, OTHER, capture=CAPTURE),
        "aclose": lambda: fs.aclose(),
    }
    if name in simple:
        await simple[name]()
        return
    opened: dict[str, Callable[[], Any]] = {
        "stream_text": lambda: fs.stream_text(TARGET),
        "stream_text_from": lambda: fs.stream_text_from(TARGET, 0),
        "walk": lambda: fs.walk(TARGET),
        "native_grep": lambda: fs.native_grep(TARGET, query_grep),
        "native_glob": lambda: fs.native_glob(TARGET, query_glob),
        "batch": lambda: fs.batch(),
    }
    async with opened[name]():
        pass


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
async def test_every_primitive_is_forwarded_once_with_capture_and_checked_as_its_row_says(
    name: str,
) -> None:
    recorder = Recorder()
    wrapper = Watching(recorder)
    await call(wrapper, name)
    # Once; `lstat` resolves its path first (to check it), the recorder's own default
    # `stream_text_from` reads through its `stream_text`.
    assert [called for called, _ in recorder.calls if called == name] == [name]
    assert {called for called, _ in recorder.calls} <= {name, "resolve", "stream_text"}
    kwargs = next(kw for called, kw in recorder.calls if called == name)
    if "capture" in inspect.signature(getattr(FileSystem, name)).parameters:
        assert kwargs["capture"] is CAPTURE
    if name in ("resolve", "lstat"):
        assert kwargs["cwd"] == "d"
    row = PRIMITIVES[name]
    assert [access for access, _ in wrapper.checked] == list(row.targets)
    two = name in ("move", "contains")
    assert [t for _, t in wrapper.checked] == (
        [TARGET, OTHER] if two else [TARGET] * len(row.targets)
    )


async def test_read_decoded_answers_the_codec_the_wrapped_provider_names_not_utf8() -> None:
    # The contract's default `read_decoded` reads through `read_text` and calls it UTF-8: a
    # wrapper that inherited it would lose the codec of every file in another encoding.
    recorder = Recorder()
    decoded = await Watching(recorder).read_decoded(TARGET)
    assert decoded.encoding == FsEncoding(codec="cp1252")
    assert [called for called, _ in recorder.calls] == ["read_decoded"]


async def test_a_hidden_target_reads_absent_and_a_refused_change_never_reaches_the_provider() -> (
    None
):
    class Hiding(WrapperFileSystem):
        def hides(self, target: FsTarget) -> bool:
            return target == TARGET

        def check(self, access: FsAccess, target: FsTarget) -> None:
            if access.touch is not FsTouch.READS and target == TARGET:
                raise RuntimeError(f"refused {access.verb}")

    recorder = Recorder()
    fs = Hiding(recorder)
    assert await fs.stat(TARGET) is None
    assert await fs.read_small(TARGET, 10) is None  # absent, as `stat` answers it
    with pytest.raises(Exception, match='cannot list "/d/a": not found'):
        await fs.list_dir(TARGET)
    with pytest.raises(Exception, match='cannot read "/d/a": not found'):
        await fs.read_decoded(TARGET)
    with pytest.raises(RuntimeError, match="refused write"):
        await fs.write_text(TARGET, "x")
    with pytest.raises(RuntimeError, match="refused move"):
        await fs.move(TARGET, OTHER)
    assert recorder.calls == []


async def test_listings_below_a_filtering_wrapper_leave_out_what_it_does_not_reveal() -> None:
    class Listing(Recorder):
        async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
            return [
                FsDirEntry(name=name, type=FsFileType.FILE, size=1, mtime_ns=None)
                for name in ("a", "hidden", "z")
            ]

    class Filtering(WrapperFileSystem):
        def filters(self, root: FsTarget) -> bool:
            return True

        def reveals(self, root: FsTarget, path: str) -> bool:
            return path != "hidden"

    fs = Filtering(Listing())
    assert [e.name for e in await fs.list_dir(TARGET)] == ["a", "z"]
    first = await fs.list_dir_first(TARGET, 1)
    assert [e.name for e in first.entries] == ["a"]
    assert first.total == 2


async def test_read_many_answers_a_hidden_or_refused_target_alone_and_forwards_the_rest() -> None:
    third = FsTarget(target_key=FsTargetKey("/k/c"), display_path="/d/c")

    class Refusing(WrapperFileSystem):
        def hides(self, target: FsTarget) -> bool:
            return target == TARGET

        def check(self, access: FsAccess, target: FsTarget) -> None:
            if target == third:
                raise FsError(FsErrorCode.SANDBOX_DENIED, f"refused {access.verb}")

    class Reading(Recorder):
        async def read_many(
            self, targets: Sequence[FsTarget], max_bytes: int
        ) -> list[bytes | FsError]:
            self._note("read_many", targets=list(targets))
            return [target.display_path.encode() for target in targets]

    recorder = Reading()
    answers = await Refusing(recorder).read_many([TARGET, OTHER, third, OTHER], 10)
    assert recorder.calls == [("read_many", {"targets": [OTHER, OTHER]})]
    assert answers[1] == answers[3] == b"/d/b"
    hidden, refused = answers[0], answers[2]
    assert isinstance(hidden, FsError)
    assert (hidden.code, hidden.message) == (FsErrorCode.NOT_FOUND, 'cannot read "/d/a": not found')
    assert isinstance(refused, FsError)
    assert (refused.code, refused.message) == (FsErrorCode.SANDBOX_DENIED, "refused read")
    recorder.calls.clear()
    (alone,) = await Refusing(recorder).read_many([TARGET], 10)
    assert isinstance(alone, FsError)
    assert alone.code is FsErrorCode.NOT_FOUND
    assert recorder.calls == []  # nothing admitted: the provider is not asked
