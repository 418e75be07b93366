"""`Workspace` and `Session`: the public API that assembles provider, tools and policy."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import anyio

from dsh_fs.discovery import DiscoveryConfig, DiscoveryPlugin
from dsh_fs.fs import (
    FS,
    FS_FORGET,
    SET_RECORDS,
    EncodingRules,
    Encodings,
    FenceOut,
    FileSystem,
    FsError,
    FsForget,
    FsTargetKey,
    JournalStore,
    ObservationLedger,
    PathRules,
    Rules,
    SetRecords,
    messages,
)
from dsh_fs.journal import Journal, JournalConfig, JournalPlugin
from dsh_fs.policy import ObservationPolicy, RulesPlugin
from dsh_fs.runtime import (
    AgentSession,
    Context,
    Dispose,
    Plugin,
    ProgressReporter,
    ToolExecution,
    ToolResult,
)
from dsh_fs.tools import (
    DEFAULT_APPROVE_TIMEOUT,
    MANAGEMENT_TOOLS,
    MAX_SET_BYTES,
    Approval,
    ApprovalGate,
    ApproveMode,
    Approver,
    ApprovingFileSystem,
    DialectGrants,
    DialectToolsPlugin,
    FileManagementPlugin,
    FsToolsPlugin,
    Proposal,
    SetRecovery,
    apply_proposal,
    recover_sets,
    workspace_id,
)
from dsh_fs.tools import MAX_IMAGE_BYTES as _MAX_IMAGE_BYTES

if TYPE_CHECKING:
    from dsh_fs.providers import FsspecFileSystem, SandboxMode

__all__ = ["ALL_TOOLS", "ApproveOption", "JournalOption", "Session", "Workspace"]

_LOG = logging.getLogger("dsh_fs.sets")

StrPath: TypeAlias = "str | os.PathLike[str]"

C = TypeVar("C")
ApproveOption: TypeAlias = "ApproveMode | Approver"
"""`approve=`: which changes need a person's approval (``none``, ``destructive``,
``changes``), or the callback to ask about every change (SPEC §11.2)."""
JournalOption: TypeAlias = "bool | str | os.PathLike[str] | JournalConfig | None"
"""`journal=`: off (None, False), on in the default store (True), on in a store directory
(a path), or a `JournalConfig`."""


def _journal_config(journal: JournalOption) -> JournalConfig | None:
    if journal is None or journal is False:
        return None
    if journal is True:
        return JournalConfig()
    if isinstance(journal, JournalConfig):
        return journal
    return JournalConfig(location=os.fspath(journal))


def _remote_store(fs: FsspecFileSystem, config: JournalConfig) -> JournalStore:
    """The store of a remote root, on its storage: `config.location` (a URL) or the hidden
    sibling prefix (fenced out when it falls inside the root).

    Raises:
        ValueError: a location that is not a URL of that storage, one inside the root, or a
            store that cannot be opened.
    """
    from dsh_fs.errors import FsError

    try:
        store = fs.journal_store(config.location)
        _prune_now(store, config)
    except ValueError:
        raise
    except FsError as exc:
        raise ValueError(f"cannot open the journal store of {fs.root}: {exc.message}") from exc
    except Exception as exc:  # the storage's own errors (botocore's are not OSErrors)
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot open the journal store of {fs.root}: {detail}") from exc
    return store


_DEFAULT_LAYOUT = os.sep + os.path.join("dsh-fs", "journal")
"""How the default store's path ends (``$XDG_STATE_HOME/dsh-fs/journal``)."""


def _local_store(
    config: JournalConfig, root: str, roots: tuple[str, ...]
) -> tuple[JournalStore, bool]:
    """The local store of `root`; whether its location lies inside one of `roots` (refused
    when it was named, fenced out when it is the default or in the default's layout).

    Raises:
        ValueError: a named store inside a served root.
    """
    from dsh_fs.providers import LocalJournalStore, default_journal_location

    location = os.path.realpath(config.location or default_journal_location())
    inside = any(_below(location, served) for served in roots)
    # A store in the default's layout (`<state>/dsh-fs/journal`) is the default named
    # explicitly (`--print-config` pins it so that a host's environment can't move it, also
    # for `dsh-fs mcp ~`, whose root holds it): fenced out like the default, not refused.
    if inside and config.location is not None and not location.endswith(_DEFAULT_LAYOUT):
        raise ValueError(
            f"the journal store {config.location!r} is inside a served root; "
            "choose a directory outside it"
        )
    # The other way round: a root inside the store would be fenced out whole (every file
    # "not found", every change refused as the store's).
    if any(_below(served, location) for served in roots):
        raise ValueError(
            f"a served root lies inside the journal store {location!r}; "
            "choose a store outside every root"
        )
    try:
        return LocalJournalStore(location, root), inside
    except OSError as exc:
        raise ValueError(f"cannot open the journal store {location!r}: {exc}") from exc


def _local_set_records(
    root: str, store: JournalStore | None
) -> tuple[SetRecords, tuple[SetRecords, ...]]:
    """Where `root`'s change sets keep their intent records: beside the journal's store
    (its ``sets`` directory, fenced out with it) when journaling, else the user's state
    directory; and the other default place, when it exists, to recover from (a process
    before may have run with the journal on or off)."""
    from dsh_fs.providers.local import (
        LocalSetRecords,
        default_journal_location,
        default_set_records_location,
        set_records_directory,
    )

    journal_side = os.path.join(default_journal_location(), "sets")
    if store is not None:
        journal_side = os.path.join(os.path.dirname(store.location), "sets")
    chosen = set_records_directory(
        journal_side if store is not None else default_set_records_location(), root
    )
    others = (
        set_records_directory(default_set_records_location(), root),
        set_records_directory(os.path.join(default_journal_location(), "sets"), root),
    )
    more = tuple(
        LocalSetRecords(other)
        for other in dict.fromkeys(others)
        if other != chosen and os.path.isdir(other)
    )
    return LocalSetRecords(chosen), more


ALL_TOOLS: tuple[str, ...] = (
    "read",
    "write",
    "edit",
    "edit_files",
    "glob",
    "grep",
    "list",
    "move",
    "delete",
    "mkdir",
)
"""Every tool a workspace can offer, in the order it offers them (all by default)."""

_FILE_TOOLS = ("read", "write", "edit", "edit_files")
_DISCOVERY_TOOLS = ("glob", "grep", "list")


_DEFAULT_RULES = Rules()
"""Protect ``.git/`` (SPEC §10)."""

_STORE = "the change journal's store"
_RECORDS = "the change sets' intent records"


def _records_places(
    records: tuple[SetRecords, ...], fenced_out: tuple[str, ...]
) -> tuple[str, ...]:
    """Where the workspace fences the intent records out: the local ones not already behind
    the journal store's fence (a remote provider fences its own place, `set_records`, and a
    root URL never reaches outside itself)."""
    from dsh_fs.providers import LocalSetRecords

    return tuple(
        place.location
        for place in records
        if isinstance(place, LocalSetRecords)
        and not any(_below(place.location, fenced) for fenced in fenced_out)
    )


def _below(path: str, place: str) -> bool:
    return path == place or path.startswith(place.rstrip("/") + "/")


def _store_places(store: JournalStore) -> tuple[str, ...]:
    """Where no tool may reach while `store` journals: for the local store the whole store
    directory (every root's sub-store: one root's model must not read another's history),
    canonical; for another store its own location (a remote provider fences its storage's
    store itself, and a root never reaches outside its URL)."""
    from dsh_fs.providers import LocalJournalStore

    if isinstance(store, LocalJournalStore):
        return (os.path.realpath(os.path.dirname(store.location)),)
    return (store.location,)


def _behind(fs: FileSystem, fenced_out: tuple[str, ...], rules: PathRules | None) -> FileSystem:
    """`fs` as every tool, dialect and adapter reaches it: the journal's store fenced out
    (whatever the mode: `--read-anywhere` and `--full-access` included), then the path
    rules."""
    service = FenceOut(fs, fenced_out, _STORE) if fenced_out else fs
    if rules is not None:
        from dsh_fs.providers import RuledFileSystem

        service = RuledFileSystem(service, rules)
    return service


def _compiled(rules: Rules | None, fs: FileSystem, cwd: StrPath | None) -> PathRules | None:
    """`rules` compiled against the provider's roots (a sandbox's roots, a local base, a
    remote root URL, else `cwd`), both as given and as real paths; None without rules."""
    if rules is None:
        return None
    roots = list(fs.roots)
    if not roots and cwd is not None:
        roots.append(os.fspath(cwd))
    roots += [os.path.realpath(root) for root in roots if "://" not in root]
    compiled = PathRules.compile(rules, dict.fromkeys(roots))
    return None if compiled.empty else compiled


EncodingsOption: TypeAlias = "Encodings | Mapping[str, str] | None"
"""Declared encodings (SPEC §12): `Encodings`, or a mapping of gitignore patterns to codec
names (``{"legacy/**": "cp1252"}``); None: none declared."""


def _encoding_rules(
    encodings: EncodingsOption,
    fallback: Sequence[str],
    roots: Iterable[str],
    editorconfig: bool = False,
) -> EncodingRules | None:
    """The declared encodings compiled against `roots` (as given and as real paths, but
    URLs); None when nothing is declared (BOMs are recognised all the same). ``charset``
    of ``.editorconfig`` files counts with any declaration, or `editorconfig` alone.

    Raises:
        ValueError: an unknown codec or a bad pattern (the message names it).
    """
    if isinstance(fallback, str):
        # One codec, or several separated by commas (as `--encoding-fallback` takes them):
        # a string is not iterated character by character ("unknown encoding 'c'").
        fallback = tuple(part.strip() for part in fallback.split(",") if part.strip())
    if encodings is None and not fallback and not editorconfig:
        return None
    given = encodings if isinstance(encodings, Encodings) else Encodings(rules=encodings or {})
    if fallback:
        given = Encodings(
            rules=given.rules,
            fallback=(*given.fallback, *fallback),
            editorconfig=given.editorconfig,
        )
    places = [str(root) for root in roots]
    places += [os.path.realpath(root) for root in places if "://" not in root]
    return EncodingRules.compile(given, dict.fromkeys(places))


def _chosen(tools: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(tools) if not isinstance(tools, str) else tuple(tools.split(","))
    unknown = [name for name in chosen if name not in ALL_TOOLS]
    if unknown:
        raise ValueError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; choose from {ALL_TOOLS}"
        )
    return tuple(name for name in ALL_TOOLS if name in chosen)


class Workspace:
    """One filesystem with the file tools and (by default) the observation policy.

    Args:
        fs: The provider; the workspace owns it and closes it in `aclose`.
        cwd: Working directory for relative paths in sessions that do not name their own;
            None leaves them to the provider's default base.
        policy: Apply the `fs-observation-policy` (default). Without it the tools are
            unconstrained: any file can be overwritten or edited without a read.
        tools: The tools to offer, among `ALL_TOOLS` (default: all ten, ``read``,
            ``write``, ``edit``, ``edit_files``, ``glob``, ``grep``, ``list``, ``move``, ``delete``,
            ``mkdir``); a comma-separated string works too.
        discovery: How glob and grep search (time budget, native searcher or not).
        max_image_bytes: The largest image `read` returns (default 5 MiB); a larger one is
            `FS_TOO_LARGE`.
        rules: Path rules (`Rules`: denied and protected gitignore patterns, relative to
            each root); the default protects ``.git/``. None applies no rule.
        placeholders: Refuse a write or edit whose new text has a line standing for omitted
            code (``// ... existing code ...``, a ``[truncated]`` marker) while it deletes
            at least 5 lines (`FS_PLACEHOLDER`, SPEC §8.3; default). False turns the guard
            off.
        journal_store: The change journal's store (None: no journal); it is fenced out of
            every tool's reach (`FenceOut`).
        journal_config: The journal's bounds.
        max_set_bytes: The most UTF-8 bytes the files of one `edit_files` call may hold
            once edited (default 64 MiB); a larger set is `INVALID_ARGS`, nothing written.
        set_records: Where `edit_files` keeps each set's intent record while it publishes
            (`SetRecords`; SPEC §13), fenced out of every tool's reach: a process killed
            mid-set leaves it, and the next workspace on the root finishes or rolls the set
            back (`recover`) before its first call. None: no crash safety (a concurrent
            writer still rolls a set back).
        recover_from: Other places an earlier process may have left records in (only
            recovered from, never written; fenced out too).
        observations: Where the observation policy keeps who read what (SPEC §14): None
            keeps it in this process's memory (each session its own); a shared ledger
            (`dsh_fs.providers.RedisLedger`) lets replicas serve one agent. The workspace
            closes it in `aclose`.

    The workspace's `fs` is the provider given behind the journal store's fence and the
    path rules (a `RuledFileSystem`): what every tool, dialect and adapter reads and
    changes through, so none of them can reveal a denied file.

    Raises:
        ValueError: an unknown tool name, or a rule pattern that cannot be parsed.

    Build one per workspace, open a `session()` per agent conversation, and call tools
    through the session. The lower-level pieces stay reachable: `context` (services,
    events, tools, prompts) and `fs`.
    """

    __slots__ = (
        "_closed",
        "_disposers",
        "_fenced_out",
        "_ledger",
        "_provider",
        "_recovered",
        "_recovery_lock",
        "_set_records",
        "approvals",
        "context",
        "cwd",
        "dialects",
        "fs",
        "journal",
        "recovered",
        "rules",
        "tools",
    )

    def __init__(
        self,
        fs: FileSystem,
        *,
        cwd: StrPath | None = None,
        policy: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = _MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal_store: JournalStore | None = None,
        journal_config: JournalConfig | None = None,
        placeholders: bool = True,
        max_set_bytes: int = MAX_SET_BYTES,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
        set_records: SetRecords | None = None,
        recover_from: Sequence[SetRecords] = (),
    ) -> None:
        chosen = _chosen(tools)
        self._ledger = observations
        compiled = _compiled(rules, fs, cwd)
        self.approvals = _approval_gate(
            fs, cwd, approve, approver, tuple(approve_paths), approve_timeout
        )
        """Which changes wait for a person's approval, and who is asked (SPEC §11.2)."""
        self._provider = fs
        self._fenced_out = _store_places(journal_store) if journal_store is not None else ()
        self._set_records = tuple(
            dict.fromkeys(places for places in (set_records, *recover_from) if places is not None)
        )
        # The intent records hold staged and replaced content, as the journal does: out of
        # every tool's reach too (a forged record would be "restored" at the next start).
        records_places = _records_places(self._set_records, self._fenced_out)
        fs = FenceOut(fs, records_places, _RECORDS) if records_places else fs
        self._recovered = not self._set_records
        self._recovery_lock = anyio.Lock()
        self.recovered: tuple[SetRecovery, ...] = ()
        """The change sets a killed process had left on this root, finished or rolled back
        by `recover` (empty until it ran)."""
        service = _behind(fs, self._fenced_out, compiled)
        self.fs: FileSystem = service
        """The `fs` service the tools use: the provider given, behind the journal store's
        fence and the path rules."""
        self.cwd = os.fspath(cwd) if cwd is not None else None
        """Default working directory of new sessions (None: the provider's base)."""
        self.tools = chosen
        """The names of the tools offered, in `ALL_TOOLS` order."""
        self.dialects = DialectGrants.of(chosen, read_only=fs.capabilities.read_only)
        """What the vendor dialects (text editor, ``apply_patch``) may offer and run: only
        what the offered tools grant (`DialectGrants`)."""
        self.context = Context()
        """The runtime context: `FS` service, the tools plugin and the policy plugin."""
        self._closed = False
        self.rules = compiled
        """The path rules the tools obey (None: none)."""
        self._disposers: list[Dispose] = [self.context.provide(FS, service)]
        if set_records is not None:
            self._disposers.append(self.context.provide(SET_RECORDS, set_records))
        file_tools = tuple(name for name in chosen if name in _FILE_TOOLS)
        if file_tools:
            plugin_tools = FsToolsPlugin(
                file_tools,
                max_image_bytes=max_image_bytes,
                placeholders=placeholders,
                max_set_bytes=max_set_bytes,
            )
            self._disposers.append(self.context.use(plugin_tools, None).dispose)
        found_tools = tuple(name for name in chosen if name in _DISCOVERY_TOOLS)
        if found_tools:
            plugin = DiscoveryPlugin(found_tools)
            self._disposers.append(self.context.use(plugin, discovery).dispose)
        managed = tuple(name for name in chosen if name in MANAGEMENT_TOOLS)
        if managed:
            plugin_ = FileManagementPlugin(managed)
            self._disposers.append(self.context.use(plugin_, None).dispose)
        self._disposers.append(
            self.context.use(DialectToolsPlugin(placeholders=placeholders), self.dialects).dispose
        )
        if compiled is not None:
            self._disposers.append(self.context.use(RulesPlugin(compiled), None).dispose)
        if policy:
            policy_plugin = ObservationPolicy(ledger=observations)
            self._disposers.append(self.context.use(policy_plugin, None).dispose)
        self.journal: Journal | None = None
        """The change journal (entries, diff, undo), or None when not journaling."""
        if journal_store is not None:
            config = journal_config or JournalConfig()
            # An undo changes files through the store's fence, not the path rules (it puts
            # back what a tool changed, wherever the rules say now).
            self.journal = Journal(
                FenceOut(fs, self._fenced_out, _STORE),
                journal_store,
                max_bytes=config.max_bytes,
                max_age_seconds=config.max_age_seconds,
                set_records=set_records,
            )
            self._disposers.append(journal_store.close)
            self._disposers.append(self.context.use(JournalPlugin(journal_store), None).dispose)
            if self.approvals.active and self.approvals.approver is None:
                self.approvals.approver = _review_approver(journal_store)

    @classmethod
    def local(
        cls,
        cwd: StrPath | None = None,
        *,
        policy: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = _MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: EncodingsOption = None,
        encoding_fallback: Sequence[str] = (),
        editorconfig: bool = False,
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
    ) -> Workspace:
        """The host filesystem, relative paths resolved against `cwd` (default: the
        process's working directory). `tools`, `discovery`, `max_image_bytes`,
        `placeholders`, `observations` and `rules` (relative to the base) as for the constructor;
        `journal` turns the change journal on (its root: `cwd`). `encodings` (patterns
        relative to the base → codec) and `encoding_fallback` (codecs for files that are not
        UTF-8 and have no rule) declare files in other encodings (SPEC §12);
        ``.editorconfig`` ``charset`` counts with them, or with `editorconfig` alone.

        Raises:
            ValueError: a named journal store inside `cwd`, or one that cannot be opened; an
                unknown codec or a bad encoding pattern.
        """
        from dsh_fs.providers import LocalFileSystem

        base = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        declared = _encoding_rules(encodings, encoding_fallback, (base,), editorconfig)
        fs = LocalFileSystem(cwd, encodings=declared)
        config = _journal_config(journal)
        store = None
        if config is not None:
            store, _ = _local_store(config, os.path.realpath(fs.base), (os.path.realpath(fs.base),))
            _prune_now(store, config)
        records, more = _local_set_records(os.path.realpath(fs.base), store)
        return cls(
            fs,
            cwd=fs.base,
            policy=policy,
            tools=tools,
            discovery=discovery,
            max_image_bytes=max_image_bytes,
            rules=rules,
            journal_store=store,
            journal_config=config,
            placeholders=placeholders,
            observations=observations,
            approve=approve,
            approver=approver,
            approve_paths=approve_paths,
            approve_timeout=approve_timeout,
            set_records=records,
            recover_from=more,
        )

    @classmethod
    def sandbox(
        cls,
        root: StrPath,
        *more_roots: StrPath,
        mode: SandboxMode = "workspace-write",
        policy: bool = True,
        confine_reads: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = _MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: EncodingsOption = None,
        encoding_fallback: Sequence[str] = (),
        editorconfig: bool = False,
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
    ) -> Workspace:
        """Local folders behind a fence (`SandboxFileSystem`); relative paths resolve against
        `root`. Mutations follow `mode`: ``read-only`` (none), ``workspace-write`` (inside
        the roots) or ``full-access`` (anywhere); reads stay inside the roots unless
        `confine_reads` is False. A refusal is `FS_SANDBOX_DENIED`. `tools`, `discovery`,
        `max_image_bytes`, `placeholders`, `observations` and `rules` (relative to each
        root) as for the constructor; `encodings`, `encoding_fallback` and `editorconfig`
        (relative to each root) as for `local`.

        Raises:
            ValueError: A root does not exist or is not a directory, or the mode is unknown;
                an unknown codec or a bad encoding pattern.
        """
        from dsh_fs.providers import SandboxFileSystem

        places = [os.path.abspath(os.fspath(place)) for place in (root, *more_roots)]
        fs = SandboxFileSystem(
            [root, *more_roots],
            mode=mode,
            confine_reads=confine_reads,
            encodings=_encoding_rules(encodings, encoding_fallback, places, editorconfig),
        )
        config = _journal_config(journal)
        store = None
        if config is not None:
            store, inside = _local_store(config, fs.roots[0], fs.roots)
            if inside:
                fs.exclude(store.location.rsplit("/", 1)[0])
            _prune_now(store, config)
        records, more = _local_set_records(fs.roots[0], store)
        for place in (records, *more):
            if any(_below(os.path.realpath(place.location), root) for root in fs.roots):
                fs.exclude(place.location)
        return cls(
            fs,
            cwd=fs.roots[0],
            policy=policy,
            tools=tools,
            discovery=discovery,
            max_image_bytes=max_image_bytes,
            rules=rules,
            journal_store=store,
            journal_config=config,
            placeholders=placeholders,
            observations=observations,
            approve=approve,
            approver=approver,
            approve_paths=approve_paths,
            approve_timeout=approve_timeout,
            set_records=records,
            recover_from=more,
        )

    @classmethod
    def remote(
        cls,
        url: str,
        *,
        policy: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = _MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: EncodingsOption = None,
        encoding_fallback: Sequence[str] = (),
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
        **storage_options: Any,
    ) -> Workspace:
        """Any fsspec storage under the root `url` (``s3://bucket/prefix``,
        ``memory://name``, ``sftp://host/dir``, …) through `FsspecFileSystem`;
        `storage_options` go to fsspec (credentials, ``endpoint_url``, …). Display paths are
        URLs under the root; ``/a.py`` means the root's ``a.py``. `tools`, `discovery`,
        `max_image_bytes`, `placeholders` and `observations` as for the constructor, and
        `rules` (relative to the root URL).
        `journal` keeps the change journal on the same storage: True in a hidden sibling
        prefix of the root (``s3://bucket/.dsh-fs-journal`` for ``s3://bucket/ws``; fenced
        out when the root is a bucket's top), a URL or a `JournalConfig` to name another.
        `encodings` and `encoding_fallback` (relative to the root URL) as for `local`.

        Raises:
            ModuleNotFoundError: fsspec is not installed (the message names the extras).
            ValueError: a journal store inside the root, not on the same storage, or one
                that cannot be opened.
            ValueError, ImportError: From fsspec: an unknown protocol, or its backend
                package is not installed (for S3, the ``s3`` extra: ``pip install '.[s3]'``
                in a dsh-fs checkout, or ``pip install s3fs``).
        """
        from dsh_fs.providers import FsspecFileSystem

        config = _journal_config(journal)
        try:
            fs = FsspecFileSystem.from_url(
                url,
                encodings=_encoding_rules(encodings, encoding_fallback, (url,)),
                **storage_options,
            )
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] != "fsspec":
                raise
            raise ModuleNotFoundError(
                "Workspace.remote needs fsspec, which is not installed: install dsh-fs with "
                "the 'remote' extra (pip install 'dsh-fs[remote]'), or the 's3' extra for "
                "S3 (pip install 'dsh-fs[s3]'); in a checkout: pip install '.[remote]'",
                name="fsspec",
            ) from exc
        store = None
        if config is not None:
            store = _remote_store(fs, config)
        records = fs.set_records(store)
        return cls(
            fs,
            cwd=fs.root,
            policy=policy,
            tools=tools,
            discovery=discovery,
            max_image_bytes=max_image_bytes,
            rules=rules,
            journal_store=store,
            journal_config=config,
            placeholders=placeholders,
            observations=observations,
            approve=approve,
            approver=approver,
            approve_paths=approve_paths,
            approve_timeout=approve_timeout,
            set_records=records,
        )

    def use(self, plugin: Plugin[C], config: C) -> None:
        """Apply a plugin of your own (your tools, their guidance) beside the built-in ones;
        it is removed with them by `aclose`. See docs/writing-a-tool.md.

        Raises:
            ValueError: a plugin of the same name is already applied, or one of its tools
                has the name of a tool already registered.
        """
        self._disposers.append(self.context.use(plugin, config).dispose)

    def session(
        self,
        *,
        cwd: StrPath | None = None,
        id: str | None = None,
        label: str | None = None,
        principal: str | None = None,
    ) -> Session:
        """A new agent session: its own observations, and its own working directory.

        Relative `cwd` values are resolved by the provider against the workspace's base.
        `label` (or `id`) names it in logs and in the journal (made unique there). With a
        shared ledger (`observations`), sessions of one `principal` (an agent, on any
        replica) share their observations; without one each session owns its own.
        """
        session_cwd = os.fspath(cwd) if cwd is not None else self.cwd
        agent = AgentSession(
            cwd=session_cwd, id=label if label is not None else id, principal=principal
        )
        return Session(self, agent)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` with JSON Schema parameters."""
        return self.context.tools.schemas()

    def system_prompt(self) -> str:
        """The tools' guidance sections, joined by blank lines."""
        return self.context.prompts.assemble()

    @property
    def closed(self) -> bool:
        """Whether `aclose` was called: later calls fail with `FS_ABORTED` and run nothing."""
        return self._closed

    async def aclose(self) -> None:
        """Close the provider (calls still in flight stop with `FS_ABORTED` where the
        provider can stop them), then remove the plugins and their state. Harmless to call
        twice."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.fs.aclose()
        finally:
            while self._disposers:
                self._disposers.pop()()
            for records in self._set_records:
                await records.aclose()
            if self._ledger is not None:
                await self._ledger.aclose()

    async def recover(self) -> tuple[SetRecovery, ...]:
        """Finish or roll back every change set a killed process left on this root (SPEC
        §13), once per workspace: its first session call and `async with` do it before
        anything else. Returns what was recovered (also `recovered`).

        Records that cannot be read (an unreadable folder) are logged and skipped.
        """
        async with self._recovery_lock:
            if not self._recovered:
                # Through the journal store's fence, not the path rules: the set's files
                # go back wherever the rules say now (as an undo does).
                fs = FenceOut(self._provider, self._fenced_out, _STORE)
                found: list[SetRecovery] = []
                # A killed set undo's roll-back is journaled (an undo of its undos): the
                # journal must say the set is in force again, else undoing it again would
                # undo only the files the killed undo had not reached.
                journal = self.journal
                capture_for = journal.recovery_capture if journal is not None else None
                for records in self._set_records:
                    try:
                        found.extend(await recover_sets(fs, records, capture_for=capture_for))
                    except FsError as error:
                        # Records this process cannot list (another user's state folder)
                        # are not its own to settle: said once, and the calls go on.
                        _LOG.warning("change sets: cannot recover: %s", error.message)
                self.recovered = tuple(found)
                self._recovered = True
        return self.recovered

    async def __aenter__(self) -> Workspace:
        await self.recover()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Workspace({type(self._provider).__name__}, cwd={self.cwd!r})"


def _approval_gate(
    fs: FileSystem,
    cwd: StrPath | None,
    approve: ApproveOption,
    approver: Approver | None,
    paths: tuple[str, ...],
    timeout: float,
) -> ApprovalGate:
    """The workspace's approval settings: a callback alone asks about every change.

    Raises:
        ValueError: an unknown mode, a timeout that is not positive, a bad pattern.
    """
    mode: ApproveMode
    if callable(approve):
        approver, mode = approve, "changes"
    elif approve == "none" or approve == "destructive" or approve == "changes":
        mode = approve
    else:
        raise ValueError(f"approve must be none, destructive, changes or a callback: {approve!r}")
    if not timeout > 0:
        raise ValueError(f"approve_timeout must be a positive number of seconds: {timeout!r}")
    roots = list(fs.roots)
    if not roots and cwd is not None:
        roots.append(os.fspath(cwd))
    compiled = None
    if paths:
        places = roots + [os.path.realpath(root) for root in roots if "://" not in root]
        compiled = PathRules.compile(
            Rules(protect=paths, default_rules=False), dict.fromkeys(places)
        )
    return ApprovalGate(
        mode=mode,
        paths=compiled,
        approver=approver,
        timeout=timeout,
        workspace=workspace_id(roots),
    )


def _review_approver(store: JournalStore) -> Approver | None:
    """Who is asked when nobody else is (SPEC §11.2): a pending entry on the review page of
    the journal's local store, which `dsh-fs review` shows and answers; None for a store
    elsewhere (no page reads a remote store's queue yet)."""
    from dsh_fs.providers import LocalJournalStore, PendingApprovals

    if not isinstance(store, LocalJournalStore):
        return None
    queue = PendingApprovals(store.location)

    async def ask(proposal: Proposal) -> Approval | None:
        answer = await queue.ask(proposal.id, proposal.to_json())
        if answer is None:
            return None
        return Approval(approved=answer.approved, note=answer.note, by="review")

    return ask


def _prune_now(store: JournalStore, config: JournalConfig) -> None:
    """Apply the journal's bounds when a workspace opens it, and keep them while it serves
    (the store prunes as it goes)."""
    store.bound(config.max_bytes, config.max_age_seconds)


class Session:
    """One agent conversation in a workspace: the owner of its observations.

    What this session read authorizes this session's writes and edits; another session
    of the same workspace must read for itself. Dropping the session frees its state.
    """

    __slots__ = ("__weakref__", "_context", "_fence", "agent", "approver", "workspace")

    def __init__(self, workspace: Workspace, agent: AgentSession) -> None:
        self.workspace = workspace
        """The workspace the session belongs to."""
        self.approver: Approver | None = None
        """Who this session's changes are put to when they need an approval (an MCP
        client's elicitation); None: the workspace's `approver` (SPEC §11.2)."""
        self.agent = agent
        """The runtime's session object (the observation owner)."""
        self._context = workspace.context
        self._fence: FileSystem | None = None
        """This session's own sandbox (`set_roots`), or None: the workspace's."""

    @property
    def roots(self) -> tuple[str, ...] | None:
        """The roots of this session's own fence (`set_roots`), or None when it has none
        (the workspace's provider decides)."""
        return self._fence.roots if self._fence is not None else None

    @property
    def fs(self) -> FileSystem:
        """The provider this session's tools use (its own fence, the store's fence, the
        path rules): what an adapter reads through, never around."""
        return self._context.get(FS)

    @property
    def client_roots(self) -> tuple[str, ...] | None:
        """The MCP client's roots that shape this session's fence (`set_roots`); None when
        no client's roots do (none were set, or they were left out: `strict`)."""
        fence = self._fence
        roots = getattr(fence, "client_roots", None) if fence is not None else None
        return roots if isinstance(roots, tuple) else None

    def set_roots(
        self, roots: Sequence[str], *, replace: bool, strict: bool = True
    ) -> tuple[str, ...] | None:
        """Fence this session in to an MCP client's roots (SPEC §10, §10.1); returns the
        roots now in force, or None when the workspace's provider is not a sandbox (nothing
        changes).

        The session gets its own sandbox (`SandboxFileSystem.narrowed`): `replace` makes
        `roots` the fence, else they only narrow the workspace's roots; no root left refuses
        every path, unless `strict` is False: then roots of which none overlaps the
        workspace's (or none at all) leave the workspace's roots in force (SPEC §10.1; see
        `client_roots`). The workspace and its other sessions keep their fences. The path rules
        apply relative to these roots too, and the first root is the base of relative
        paths. What the session observed under a root it no longer has is forgotten (only
        that: the rest stays observed).

        `roots` are existing local directories (see `dsh_fs.mcp`'s checks of a client's
        URIs); a root that cannot be resolved any more is dropped.
        """
        from dsh_fs.providers import SandboxFileSystem

        workspace = self.workspace
        fs = workspace._provider
        if not isinstance(fs, SandboxFileSystem):
            return None
        before = self._fence if isinstance(self._fence, SandboxFileSystem) else fs
        fenced = fs.narrowed(roots, replace=replace, strict=strict)
        rules = workspace.rules
        if rules is not None:
            places = [*fenced.roots, *fs.roots]
            places += [os.path.realpath(place) for place in places]
            rules = PathRules.compile(rules.source, dict.fromkeys(places))
        # The client's roots may contain the journal's store: it stays fenced out.
        service = _behind(fenced, workspace._fenced_out, rules)
        self._fence = fenced
        self._context = self.workspace.context.overlay({FS: service})
        self.agent.cwd = fenced.roots[0] if fenced.roots else None

        def forgotten(key: FsTargetKey) -> bool:
            return before.holds(key) and not fenced.holds(key)

        execution = ToolExecution(tool="roots", session=self.agent)
        self._context.events.emit(FS_FORGET, FsForget(forgotten=forgotten, actor=execution))
        return fenced.roots

    @property
    def id(self) -> str:
        """A label for logs."""
        return self.agent.id

    @property
    def cwd(self) -> str | None:
        """Working directory of relative paths (None: the provider's base)."""
        return self.agent.cwd

    async def call(
        self,
        name: str,
        arguments: object,
        *,
        call_id: str | None = None,
        progress: ProgressReporter | None = None,
        internal: bool = False,
        approver: Approver | None = None,
    ) -> ToolResult:
        """Run tool `name` with the model's `arguments` (normally a JSON object).

        Never raises for a tool failure: the result has `is_error`, `text` (``Error: …``)
        and `code`. Only cancellation propagates: a cancelled call leaves no partial file,
        and records only what it completed before the cancellation reached it. On a closed
        workspace every call fails with `FS_ABORTED`. `progress` receives the progress of
        long calls (a large read). `internal` reaches the internal tools (`insert`, `patch`,
        `delete_file`) that the dialect adapters use; a model's call never sets it.
        `approver` asks about this call's changes when they need an approval (an MCP
        client's elicitation); None: the session's, else the workspace's (SPEC §11.2).
        """
        if self.workspace.closed:
            error = messages.workspace_closed(name)
            return ToolResult.failure(
                name, code=error.code.value, message=error.message, error_name="FsError"
            )
        if not self.workspace._recovered:
            await self.workspace.recover()
        execution = ToolExecution(tool=name, session=self.agent, call_id=call_id, progress=progress)
        context = self._context
        gate = self.workspace.approvals
        if gate.active:
            # One view per call, in front of the session's fs: every mutation the call makes
            # (any tool, any dialect) is proposed, put to a person and published pinned.
            view = ApprovingFileSystem(
                context.get(FS),
                gate,
                tool=name,
                session=self.agent.id,
                approver=approver if approver is not None else self.approver,
            )
            context = context.overlay({FS: view})
        return await context.execute(name, arguments, execution, internal=internal)

    async def apply(self, proposal: Proposal, approval: Approval) -> ToolResult:
        """Publish a proposal held across a pause (a LangGraph interrupt resumed later),
        under the same pin as at once: only if every file is still at the proposal's base
        version, with exactly the proposal's bytes (SPEC §11.2).

        Never raises for a refusal: the outcome has `is_error`, `text` (``Error: …``) and
        `code` — `FS_REJECTED` for a rejection, `FS_STALE_VERSION` (with §6's remedy) when a
        file moved on, `FS_NOT_APPROVED` for a proposal of another workspace, one whose
        bytes do not match their digest, or one already published; a path outside this
        session's fence is refused as any call's would be.
        """
        execution = ToolExecution(tool=proposal.tool, session=self.agent)
        return await apply_proposal(
            self._context, execution, self.workspace.approvals, proposal, approval
        )

    def __repr__(self) -> str:
        return f"Session(id={self.agent.id!r}, cwd={self.agent.cwd!r})"
