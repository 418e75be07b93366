"""The local provider's critical sections: a write, an edit and a delete as compare-and-swap
steps.

Each runs in one worker thread with the target's in-process lock held, and takes the
cross-process `flock` of the parent directory (a write first creates missing parents, each
in a directory the guards saw). Inside it, everything goes through the locked directory's
descriptor: open the prior file, check its version, let the guards look at the directory
before anything in it changes, sweep residue, stage, let the guards look again, publish,
fsync. The steps are the methods below, in that order.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat as st_mode
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Generic, Literal, TypeVar

from dsh_fs._platform import inode_generation, sync
from dsh_fs.errors import FsError
from dsh_fs.fs import (
    BEFORE_LIMIT,
    UTF8,
    CreateIfAbsent,
    EncodedText,
    EncodingRules,
    FsCapture,
    FsChangeStart,
    FsDeleteOutcome,
    FsEdit,
    FsEditOutcome,
    FsEditRequest,
    FsEncoding,
    FsPreImage,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    ReplaceIfVersion,
    WriteGuard,
    apply_change,
    apply_edit_encoded,
    bom_encoding,
    journal_codec,
    messages,
)

from .._oserrors import map_os_errors
from .._text import (
    check_text,
    decode_file,
    decode_or_none,
    encode_as,
    encode_text,
    encode_text_parts,
    round_trip,
    splice,
)
from ._closer import close_later
from ._dirs import directory_lock, make_parents
from ._guards import LocalGuards
from ._io import WHOLE_CHECK_BYTES, LazyContent
from ._journal_store import LocalKept, LocalReplaced, read_kept
from ._open import Opened, fd_path, open_existing
from ._publish import Publication, Staged, deferred_sync, publish, writable_in_place
from ._realpath import real_path
from ._staging import sweep_stage_dirs_at
from ._versions import Published, RecentlyPublished, VersionBook, digest_parts

__all__ = ["BACKGROUND_DIGEST_BYTES", "BESIDE_CHECK_BYTES", "HOLD_BYTES", "LocalMutations"]

_T = TypeVar("_T")

BACKGROUND_DIGEST_BYTES = 4 * 1024 * 1024
"""Published content larger than this is hashed in a helper thread (see `_Digest`); up to
it, while it is written."""

_SNIFF = 64 * 1024
"""Bytes of a prior file looked at before it is read whole to try fallback codecs: a NUL in
them makes it binary in every one (SPEC §12), so a huge binary file is never read."""

_SWEPT_DIRECTORIES = 4096
"""How many directories a provider remembers having swept for staging residue."""

HOLD_BYTES = 4 * 1024 * 1024
"""A replaced file up to this size is closed after the answer, by the closer thread, where
the kernel frees it (`_closer`; 0.2 ms for 1 MB, a fifth of such a write); a larger one is
closed before the rename, as it was: freeing 100 MB is tens of milliseconds of the
filesystem's journal work in one burst, a tenth of such a call, which a following change
would meet in the background instead (the undo of five 100 MB edits in a row was the case
looked at; its run-to-run spread, 1.0-1.6× the edit, was too wide to tell either way)."""

BESIDE_CHECK_BYTES = 256 * 1024
"""An edit's prior of at least this size that another program wrote is checked as text in
the provider's helper thread while the edited content is staged and fsynced (`_TextCheck`);
a smaller one is checked first, where the hop would cost about what the check does."""


@dataclass(frozen=True, slots=True)
class _Prior:
    """The file a mutation replaces, as found inside the critical section."""

    info: os.stat_result | None
    """Its stat; None when there is no file (a create)."""
    before: str | None = None
    """Its text, for a write's outcome (which may leave it out)."""
    decoding: _Beside[str | None] | None = None
    """`before` still being decoded beside the publication (a large prior another program
    wrote, for a write that is not journaled); None: `before` is final."""
    content: EncodedText | None = None
    """Its bytes, checked as text, for an edit (a UTF-8 file); a write's when it holds
    them (for the journal). An edit's may still be being checked (`checking`)."""
    checking: _TextCheck | None = None
    """The text check of an edit's `content` running beside the publication, which must
    pass before anything is published or reported; None: checked already."""
    foreign: _Foreign | None = None
    """Its bytes and text, for an edit of a file in another encoding (SPEC §12)."""
    encoding: FsEncoding | None = None
    """Its encoding, for a write (which keeps it); None for a create."""
    fd: int | None = None
    """The descriptor it was read through, held until the publication replaced it
    (`replacing`); None for a create."""

    @contextmanager
    def replacing(self) -> Iterator[None]:
        """The block that publishes over this file; `fd` is closed after it: in the closer
        thread when the block ends (the file replaced: the kernel frees it there,
        `_closer`), now when it raises."""
        try:
            yield
        except BaseException:
            if self.fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.fd)
            raise
        if self.fd is not None:
            close_later(self.fd)


@dataclass(frozen=True, slots=True)
class _Foreign:
    """A file whose bytes are text in an encoding other than UTF-8 (proven to round-trip)."""

    data: bytes | bytearray
    """Its bytes."""
    text: str
    """Their text."""
    encoding: FsEncoding
    """The encoding that maps one to the other."""


class LocalMutations:
    """Writes and edits of one `LocalFileSystem`, run synchronously in worker threads.

    Args:
        versions: The provider's version book (digests of what it read and wrote).
        guards: The checks a wrapper makes on what is opened and where it is published.
    """

    def __init__(
        self,
        versions: VersionBook,
        guards: LocalGuards,
        new_file_mode: int,
        encodings: EncodingRules | None = None,
        rule_for: Callable[[FsTarget], str | None] | None = None,
    ) -> None:
        self._versions = versions
        self._guards = guards
        self._encodings = encodings
        self._rule_for = rule_for
        self._new_file_mode = new_file_mode
        self._recent = RecentlyPublished(release=versions.release)
        # Started on first use; its idle thread ends when the provider is collected.
        self._hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-fs-digest")
        # The journal's records of concurrent mutations (each while its content is staged).
        self._journaler = ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="dsh-fs-journal-record"
        )
        self._swept: set[str] = set()

    def write(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        """`write_text` inside the critical section (see `LocalFileSystem.write_text`): the
        content in the encoding the prior file has (SPEC §12: its codec and BOM), else in
        the one a rule declares for the path, else UTF-8."""
        display = target.display_path
        encoding = self._declared(target)
        text = _with_bom(content, encoding)
        data = _encoded(text, encoding, display)

        def reencode(prior: FsEncoding) -> tuple[bytes | EncodedText, str]:
            again = _with_bom(content, prior)
            return _encoded(again, prior, display), again

        operation, version, before, written = self._write_data(
            target, data, text, expected, capture, encoding=encoding, reencode=reencode
        )
        assert written is not None
        return FsWriteOutcome(operation=operation, version=version, before=before, after=written)

    def _rule(self, target: FsTarget) -> str | None:
        """The codec a rule (or an ``.editorconfig``) declares for `target`, if any."""
        if self._rule_for is not None:
            return self._rule_for(target)
        if self._encodings is None:
            return None
        return self._encodings.codec_for((target.display_path, target.target_key))

    def _fallback(self) -> tuple[str, ...]:
        return self._encodings.fallback if self._encodings is not None else ()

    def _declared(self, target: FsTarget) -> FsEncoding:
        """The encoding a new file at `target` gets: its rule's (``utf-8-sig``: UTF-8 with a
        BOM), else plain UTF-8."""
        rule = self._rule(target)
        if rule is None or rule == "utf-8":
            return UTF8
        if rule == "utf-8-sig":
            return FsEncoding(bom=True)
        return FsEncoding(codec=rule)

    def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        mode: int | None,
        capture: FsCapture | None,
    ) -> FsVersion | None:
        """`restore` inside the critical section (see `FileSystem.restore`): a delete at
        `expected`, or a guarded write of the kept bytes (never a link to the store's copy)."""
        if pre_image is None:
            assert expected is not None
            self.delete(target, expected, capture)
            return None
        assert isinstance(pre_image, LocalKept)
        display = target.display_path
        owner = None
        if expected is None:
            # A file is recreated only where nothing is, not even a link: a dangling link
            # now at the path resolves elsewhere (into `.git/`, out of a fence's sight), and
            # writing through it would create what the link names.
            with map_os_errors("write", display):
                here = os.path.join(real_path(os.path.dirname(display)), os.path.basename(display))
                if here != target.target_key or os.path.islink(here):
                    raise messages.restore_link_in_way(display)
            if pre_image.uid is not None and pre_image.gid is not None:
                owner = (pre_image.uid, pre_image.gid)
        with map_os_errors("write", display):
            data = read_kept(pre_image)
        assert data is not None  # no limit asked
        guard: WriteGuard = CreateIfAbsent() if expected is None else ReplaceIfVersion(expected)
        # Kept as the provider's recent text only when small (decoding 100 MB costs more
        # than the restore's write).
        text = decode_or_none(data) if len(data) <= BEFORE_LIMIT else None
        _, version, _, _ = self._write_data(target, data, text, guard, capture, mode, owner)
        return version

    def _write_data(
        self,
        target: FsTarget,
        data: bytes | EncodedText,
        text: str | None,
        expected: WriteGuard | None,
        capture: FsCapture | None,
        mode: int | None = None,
        owner: tuple[int, int] | None = None,
        *,
        encoding: FsEncoding | None = None,
        reencode: Callable[[FsEncoding], tuple[bytes | EncodedText, str]] | None = None,
    ) -> tuple[Literal["create", "update"], FsVersion, str | None, str | None]:
        """Publish `data` (whose text is `text`, when known). A write passes the
        `encoding` it encoded `data` in and how to `reencode` it: a prior file in another
        encoding gets the content in its own (decided inside the critical section)."""
        key, display = target.target_key, target.display_path
        kept = self._keepable(data, text, encoding)
        data_digest = _Digest(data, self._hasher, deferred=kept is not None)
        parent, name = os.path.split(key)
        with map_os_errors("write", display):
            missing = partial(
                make_parents,
                parent,
                lambda fd, path: self._check_directory("write", display, fd, path),
            )
            with directory_lock(parent, missing) as dir_fd:
                prior = self._prior_for_write(
                    target, dir_fd, expected, encoding is not None, journaled=capture is not None
                )
                with prior.replacing():
                    if reencode is not None and prior.encoding not in (None, encoding):
                        assert prior.encoding is not None
                        data, text = reencode(prior.encoding)
                        encoding = prior.encoding
                        kept = self._keepable(data, text, encoding)
                        data_digest = _Digest(data, self._hasher, deferred=kept is not None)
                    # SPEC §12: the journal decodes the change in the codec written (a
                    # restore's bytes: the one its path declares).
                    codec = None
                    if capture is not None:
                        codec = journal_codec(encoding or self._declared(target))
                    published, ticket = self._publish(
                        "write",
                        target,
                        dir_fd,
                        parent,
                        name,
                        data,
                        prior,
                        capture,
                        data_digest,
                        mode,
                        owner,
                        codec,
                        stamp=kept is not None,
                    )
        version = self._remember(key, published.info, data_digest, kept)
        if capture is not None:
            # A deferred digest is the journal's to compute (told the content ahead, it
            # hashes it while the publication waits on the disk, `_start`).
            _commit(capture, ticket, version, data, data_digest.computed())
        self._keep(key, version, kept, published.generation, nul_free=True)
        operation: Literal["create", "update"] = "create" if prior.info is None else "update"
        before = prior.before if prior.decoding is None else prior.decoding.result()
        return operation, version, before, text

    def _keepable(
        self, data: bytes | EncodedText, text: str | None, encoding: FsEncoding | None
    ) -> EncodedText | None:
        """The content `RecentlyPublished` will keep after a write of `data` (its text is
        `text`, in `encoding`), or None: only UTF-8 whose text is known, while small, and
        with no NUL (which it would refuse: binary). Looked for here, right after `data`
        was encoded, while its bytes are still in the CPU's cache: after the publication
        wrote and fsynced them, the scan cost three times as much (0.05 ms a MiB)."""
        if text is None or not (encoding is None or encoding.utf8):
            return None
        content = data if isinstance(data, EncodedText) else EncodedText((data,), text=text)
        if not self._recent.fits(content) or any(b"\0" in part for part in content.parts):
            return None
        return content

    def _remember(
        self, key: str, published: os.stat_result, data_digest: _Digest, kept: EncodedText | None
    ) -> FsVersion:
        """The published version, its digest remembered: deferred when the content will be
        kept (`VersionBook.remember` with a function: most later checks are a byte compare
        against the kept bytes, and the digest is computed only if one needs it)."""
        if kept is None:
            return self._versions.remember(published, data_digest.result())
        return self._versions.remember(published, partial(digest_parts, kept.parts))

    def _keep(
        self,
        key: str,
        version: FsVersion,
        kept: EncodedText | None,
        generation: int | None,
        *,
        nul_free: bool = False,
    ) -> None:
        """Keep what `key` now holds at `version` (None: forget what was kept: the content is
        too big, or its text is not the UTF-8 of its bytes), with the `generation` of a stamped
        publication (`Publication.generation`); `nul_free` when `_keepable` chose it."""
        if kept is None:
            self._recent.forget(key)
        elif (
            self._recent.keep(key, version, kept, generation=generation, nul_free=nul_free) is None
        ):
            # Nothing keeps it (a NUL made it binary): its deferred digest settles now, so
            # a same-tick rewrite is still caught.
            self._versions.lookup(version)

    def edit(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        """`edit_text` inside the critical section (see `LocalFileSystem.edit_text`)."""
        key, display = target.target_key, target.display_path
        parent, name = os.path.split(key)
        with (
            map_os_errors("edit", display),
            _gone_without_directory(parent, display),
            directory_lock(parent) as dir_fd,
        ):
            prior = self._prior_for_edit(target, dir_fd, expected)
            assert prior.info is not None
            with prior.replacing():
                if prior.foreign is not None:
                    # SPEC §12: the change is made on the text, and only the changed span's
                    # bytes are encoded and spliced into the file's own.
                    foreign = prior.foreign
                    text, count = apply_change(foreign.text, edit, display)
                    after: EncodedText | bytes = splice(
                        foreign.data,
                        foreign.encoding,
                        foreign.text,
                        text,
                        "edit",
                        display,
                        "new_string",
                    )
                else:
                    assert prior.content is not None
                    after, count = _edited(prior.content, edit, display, prior.checking)
                kept = (
                    after if isinstance(after, EncodedText) and self._recent.fits(after) else None
                )
                data_digest = _Digest(after, self._hasher, deferred=kept is not None)
                codec = journal_codec(prior.foreign.encoding if prior.foreign is not None else None)
                try:
                    published, ticket = self._publish(
                        "edit",
                        target,
                        dir_fd,
                        parent,
                        name,
                        after,
                        prior,
                        capture,
                        data_digest,
                        codec=codec,
                        stamp=kept is not None,
                    )
                except BaseException:
                    if prior.checking is not None:
                        # A prior that is not text says so first, whatever else refused the
                        # edit meanwhile (as when it was checked before anything else).
                        prior.checking()
                    raise
        version = self._remember(key, published.info, data_digest, kept)
        if capture is not None:
            _commit(capture, ticket, version, after, data_digest.computed())
        if isinstance(after, EncodedText):
            self._keep(key, version, after, published.generation)
            assert prior.content is not None
            return FsEditOutcome(
                version=version, before=prior.content, after=after, replacements=count
            )
        self._recent.forget(key)
        assert prior.foreign is not None
        return FsEditOutcome(
            version=version, before=prior.foreign.text, after=text, replacements=count
        )

    def delete(
        self, target: FsTarget, expected: FsVersion | None, capture: FsCapture | None = None
    ) -> FsDeleteOutcome:
        """`delete` inside the critical section (see `LocalFileSystem.delete`): the entry the
        path names is removed from its locked directory; a symbolic link is removed itself."""
        display = target.display_path
        # The entry as spelled: its directory's real path, and its own name unresolved.
        parent = real_path(os.path.dirname(display))
        name = os.path.basename(display)
        gone = messages.delete_gone if expected is not None else _not_found_delete
        with (
            map_os_errors("delete", display),
            _gone_without_directory(parent, display, gone),
            directory_lock(parent) as dir_fd,
        ):
            try:
                entry = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                raise gone(display) from None
            opened = open_existing(
                os.path.join(parent, name), "delete", display, self._guards, dir_fd
            )
            if opened is None:
                raise gone(display)
            try:
                content = LazyContent(opened.fd, opened.info.st_size)
                ours = self._ours(target.target_key, opened, content)
                if expected is not None and not self._is_current(expected, opened, content, ours):
                    raise messages.delete_stale(display)
                # A link is removed itself: the permission bits of what it points to say
                # nothing about removing it.
                if not st_mode.S_ISLNK(entry.st_mode):
                    self._refuse_read_only(name, dir_fd, "delete", display)
                version = self._versions.version(opened.info)
            finally:
                os.close(opened.fd)
            self._guards.check_delete(display, fd_path(dir_fd, parent))
            # The entry must still be the one checked: not a file swapped in meanwhile.
            now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (entry.st_dev, entry.st_ino):
                raise messages.delete_stale(display)
            ticket = None
            if capture is not None:
                ticket = capture.prepare(self._start("delete", target, dir_fd, name, now))
            try:
                os.unlink(name, dir_fd=dir_fd)
                # Durable before the call returns (and before the journal's entry says so).
                sync(dir_fd)
            except BaseException:
                if capture is not None:
                    capture.abandon(ticket)
                raise
        # Committed after the directory lock is released: the change is published and
        # durable, and a record left pending (this process killed now) is completed by the
        # store's next reader; holding the lock would only make other writers wait longer.
        if capture is not None:
            capture.commit(ticket, None, None)
        return FsDeleteOutcome(version=version)

    def _prior_for_write(
        self,
        target: FsTarget,
        dir_fd: int,
        expected: WriteGuard | None,
        encoded: bool,
        *,
        journaled: bool = False,
    ) -> _Prior:
        """The file a write replaces, checked against `expected`; its text when the guards
        may reveal it and it is small enough to keep; its encoding when the write is
        `encoded` (a restore's bytes are kept as they are); for a `journaled` write, its
        UTF-8 bytes when they were read (the journal counts lines from them)."""
        opened = open_existing(
            target.target_key, "write", target.display_path, self._guards, dir_fd
        )
        if opened is None:
            if isinstance(expected, ReplaceIfVersion):
                raise messages.write_gone(target.display_path)
            return _Prior(None)
        return self._holding(
            opened,
            partial(self._found_for_write, target, opened, dir_fd, expected, encoded, journaled),
        )

    def _found_for_write(
        self,
        target: FsTarget,
        opened: Opened,
        dir_fd: int,
        expected: WriteGuard | None,
        encoded: bool,
        journaled: bool,
    ) -> _Prior:
        """`_prior_for_write` of the file found, `opened` (its descriptor left to the
        caller)."""
        key, display = target.target_key, target.display_path
        # A create-only write found a file: one the caller never read (it appeared since
        # the call's checks), which the write must not replace unseen.
        if isinstance(expected, CreateIfAbsent):
            raise messages.overwrite_unobserved(display)
        self._refuse_read_only(key, dir_fd, "write", display)
        content = LazyContent(opened.fd, opened.info.st_size)
        ours = self._ours(key, opened, content)
        if isinstance(expected, ReplaceIfVersion) and not self._is_current(
            expected.version, opened, content, ours, expected.content
        ):
            raise messages.write_stale(display)
        encoding = self._existing_encoding(target, opened.fd, content) if encoded else None
        # The outcome's `before` would show the replaced text: not of a file the fence
        # does not let this caller read (a write outside the readable area).
        if not self._guards.may_reveal(opened.path):
            return _Prior(opened.info, encoding=encoding)
        # The replaced bytes, when at hand, go to the journal too (`_publish`): it counts
        # lines from them rather than reading its pre-image back (read ones are held only
        # for a journaled write: the text alone is kept otherwise).
        if ours is not None and (encoding is None or encoding.utf8):
            replaced = ours.content
            return _Prior(opened.info, ours.text, content=replaced, encoding=encoding)
        if opened.info.st_size <= BEFORE_LIMIT:
            raw = content()
            held = None
            if encoding is None or encoding.utf8:
                if not journaled and len(raw) >= BESIDE_CHECK_BYTES:
                    # Only the outcome reports it: decoded while the content is
                    # staged and fsynced (1.1 ms of a 1 MB write, issue 44).
                    decoding = _Beside(partial(decode_or_none, raw), self._hasher)
                    return _Prior(opened.info, decoding=decoding, encoding=encoding)
                before = decode_or_none(raw)
                if journaled and before is not None and type(raw) is bytes:
                    held = EncodedText((raw,), text=before)
            else:
                before = round_trip(raw, encoding.codec)
            return _Prior(opened.info, before, content=held, encoding=encoding)
        return _Prior(opened.info, encoding=encoding)

    def _holding(self, opened: Opened, found: Callable[[], _Prior]) -> _Prior:
        """The prior `found` makes of the file `opened`, with its descriptor where `_held`
        keeps it; the descriptor is closed when `found` raises."""
        try:
            prior = found()
        except BaseException:
            os.close(opened.fd)
            raise
        return replace(prior, fd=self._held(opened))

    def _held(self, opened: Opened) -> int | None:
        """`opened`'s descriptor, held until the publication replaced the file
        (`_Prior.replacing`) where the filesystem is a plain local disk's: a block device's,
        whose timestamps the provider takes as they are. Elsewhere it is closed now, and
        None.

        Why: NFS renames a file this client holds open out of the way (a ``.nfs…`` file, left
        behind by a crash) before replacing it, and SMB refuses to replace a file open without
        delete sharing. Both are mounted with anonymous device numbers (major 0), as are tmpfs
        (freeing its pages is cheap anyway), FUSE, overlay and btrfs subvolumes, which are
        spared the question; and a provider told that its filesystem keeps coarser times
        than it reports (`timestamp_granularity_ns`, a network filesystem's usual case) is
        given the same care. A file over `HOLD_BYTES` is closed now too: its freeing is a
        long burst of the filesystem's journal work that the next change of the file would
        run into."""
        info = opened.info
        if self._versions.exact and os.major(info.st_dev) != 0 and info.st_size <= HOLD_BYTES:
            return opened.fd
        os.close(opened.fd)
        return None

    def _existing_encoding(self, target: FsTarget, fd: int, content: LazyContent) -> FsEncoding:
        """The encoding of the file a write replaces, which the write keeps: the one its BOM
        names, else its rule's, else UTF-8, unless fallbacks apply and it is no UTF-8 (then
        the content is read and proven as a read would)."""
        with map_os_errors("write", target.display_path):
            # The bytes already read when the prior was compared: no `pread` then.
            head = content.head(3)
        bom = bom_encoding(head)
        if bom is not None:
            return bom
        rule = self._rule(target)
        if rule is not None:
            return UTF8 if rule in ("utf-8", "utf-8-sig") else FsEncoding(codec=rule)
        if not self._fallback() or b"\0" in content.head(_SNIFF):
            return UTF8
        try:
            _, encoding = decode_file(content(), None, self._fallback(), "write", "")
        except FsError:
            return UTF8  # not text in any candidate: replaced as UTF-8, as before §12
        return encoding

    def _prior_for_edit(self, target: FsTarget, dir_fd: int, expected: FsVersion | None) -> _Prior:
        """The file an edit changes, checked against `expected` before any matching (a stale
        edit is stale, never a match error), with its text."""
        opened = open_existing(target.target_key, "edit", target.display_path, self._guards, dir_fd)
        if opened is None:
            raise messages.edit_gone(target.display_path)
        return self._holding(
            opened, partial(self._found_for_edit, target, opened, dir_fd, expected)
        )

    def _found_for_edit(
        self, target: FsTarget, opened: Opened, dir_fd: int, expected: FsVersion | None
    ) -> _Prior:
        """`_prior_for_edit` of the file found, `opened` (its descriptor left to the caller)."""
        key, display = target.target_key, target.display_path
        content = LazyContent(opened.fd, opened.info.st_size)
        ours = self._ours(key, opened, content)
        if expected is not None and not self._is_current(expected, opened, content, ours):
            raise messages.edit_stale(display)
        foreign = self._foreign(target, content)
        if foreign is not None:
            self._refuse_read_only(key, dir_fd, "edit", display)
            return _Prior(opened.info, foreign=foreign)
        if ours is not None:
            # Text already: `RecentlyPublished` keeps no content a read would refuse.
            before = ours.content
        elif (checking := self._check_beside(content, opened, display)) is not None:
            try:
                self._refuse_read_only(key, dir_fd, "edit", display)
            except FsError:
                checking()  # a file that is not text says so first, as below
                raise
            return _Prior(opened.info, content=EncodedText((content(),)), checking=checking)
        else:
            try:
                before = EncodedText((content.checked("edit", display),))
            except FsError:
                foreign = self._fallen_back(target, content)
                if foreign is None:
                    raise
                self._refuse_read_only(key, dir_fd, "edit", display)
                return _Prior(opened.info, foreign=foreign)
        self._refuse_read_only(key, dir_fd, "edit", display)
        # Only the bytes go on, checked as text: the edit decodes them only if it must.
        return _Prior(opened.info, content=before)

    def _check_beside(
        self, content: LazyContent, opened: Opened, display: str
    ) -> _TextCheck | None:
        """The check of an edit's prior as text, started in the helper thread, when it can
        run beside the publication: a prior of `BESIDE_CHECK_BYTES` to `WHOLE_CHECK_BYTES`
        (read whole now) whose refusal nothing could turn into another encoding (no
        fallback codecs, no BOM but UTF-8's). Issue 44: the check was a third of an edit of
        a 1 MB file another program wrote; the staged file's write and fsync need no GIL,
        so the two overlap, and the unnamed staged file of a refused edit vanishes unlinked.
        """
        size = opened.info.st_size
        if not BESIDE_CHECK_BYTES <= size <= WHOLE_CHECK_BYTES or self._fallback():
            return None
        data = content()
        bom = bom_encoding(data[:4])
        if bom is not None and not bom.utf8:
            return None
        return _TextCheck(data, display, self._hasher)

    def _foreign(self, target: FsTarget, content: LazyContent) -> _Foreign | None:
        """The file's bytes and text when a rule names another codec than UTF-8 for it (a
        UTF-16 BOM with valid content wins); None for the UTF-8 path.

        Raises:
            FsError: `FS_NOT_TEXT` when the rule's codec fails the round-trip proof.
        """
        rule = self._rule(target)
        if rule is None or rule in ("utf-8", "utf-8-sig"):
            return None
        data = content()
        text, encoding = decode_file(data, rule, (), "edit", target.display_path)
        return _Foreign(data, text, encoding) if not encoding.utf8 else None

    def _fallen_back(self, target: FsTarget, content: LazyContent) -> _Foreign | None:
        """For a file that is not UTF-8 and has no rule: its text by its UTF-16 BOM or the
        first fallback codec that proves it, else None (the UTF-8 refusal stands). The file
        is read whole only when one of those may apply (a 5 GiB sparse file is not)."""
        head = content.head(_SNIFF)
        bom = bom_encoding(head)
        if (bom is None or bom.utf8) and (not self._fallback() or b"\0" in head):
            return None  # a NUL is binary in every fallback codec
        data = content()
        try:
            text, encoding = decode_file(data, None, self._fallback(), "edit", target.display_path)
        except FsError:
            return None
        return _Foreign(data, text, encoding) if not encoding.utf8 else None

    def _publish(
        self,
        verb: messages.Verb,
        target: FsTarget,
        dir_fd: int,
        parent: str,
        name: str,
        data: bytes | EncodedText,
        prior: _Prior,
        capture: FsCapture | None,
        data_digest: _Digest,
        mode: int | None = None,
        owner: tuple[int, int] | None = None,
        codec: str | None = None,
        *,
        stamp: bool = False,
    ) -> tuple[Publication, object]:
        """Let the guards look at the locked directory before anything in it changes, sweep
        dead writers' staging residue once per directory (through its descriptor), then
        publish `data` as `name` with the guards' last look at it. A journaled change hands
        the replaced inode to `capture` right after that look, before the publication (and
        the `codec` of the file's text, SPEC §12); returns the publication and the
        capture's ticket. With `stamp`, content `RecentlyPublished` will keep gets a time
        that proves it unchanged later (`_publish.Staged.stamp`), where the version book
        keeps every nanosecond of it."""
        assert verb in ("write", "edit")
        display = target.display_path
        self._check_directory(verb, display, dir_fd, parent)
        if parent not in self._swept:
            if len(self._swept) >= _SWEPT_DIRECTORIES:
                self._swept.clear()
            self._swept.add(parent)
            sweep_stage_dirs_at(dir_fd)

        prepared: Future[object] | None = None
        if capture is not None:
            # The journal makes its record and the pre-image durable while the content is
            # staged and fsynced: two waits on the disk at once, not one after the other
            # (the journal's fsyncs were a fifth of a journaled 1 MB edit). The guards have
            # looked at the locked directory above, before anything changes; the pre-image
            # is the inode `prior` checked (the store verifies the one it keeps), and
            # nothing is published before `check` has the durable record in hand.
            # An edit read the replaced content: the journal counts lines from it.
            foreign = prior.foreign.data if prior.foreign is not None else None
            if isinstance(foreign, bytearray):
                foreign = None  # not copied: the journal reads its pre-image instead
            replaced = prior.content if foreign is None else foreign
            # Content whose digest the provider defers (it keeps the content) is told to
            # the journal ahead: the record's digest and line counts are made while the
            # publication waits on the disk, not after it.
            ahead = data if data_digest.deferred else None
            start = self._start(verb, target, dir_fd, name, prior.info, replaced, codec, ahead)
            prepared = self._journaler.submit(capture.prepare, start)

        def check() -> None:
            assert verb in ("write", "edit")
            if prior.checking is not None:
                prior.checking()  # a prior that is not text: nothing published, the reason
            # The kernel's path of the locked directory, not a path that could be swapped.
            if not self._guards.passive:
                self._guards.check_publish(verb, display, fd_path(dir_fd, parent))
            if prepared is not None:
                prepared.result()  # a journal refusal (a full disk) refuses the change

        staged = Staged(
            data=data,
            prior=prior.info,
            new_file_mode=self._new_file_mode,
            mode=mode,
            owner=owner,
            hasher=data_digest.hasher,
            stamp=stamp and self._versions.exact,
        )
        try:
            published = publish(dir_fd, name, staged, display, check)
        except BaseException:
            # The record may still be in the making (staging failed first): wait for it,
            # as it uses the locked directory's descriptor, then forget it.
            if capture is not None and prepared is not None:
                ticket = _prepared(prepared)
                if ticket is not None:
                    capture.abandon(ticket)
            raise
        return published, (prepared.result() if prepared is not None else None)

    def _start(
        self,
        verb: messages.Verb,
        target: FsTarget,
        dir_fd: int,
        name: str,
        info: os.stat_result | None,
        content: bytes | EncodedText | None = None,
        codec: str | None = None,
        after: bytes | EncodedText | None = None,
    ) -> FsChangeStart:
        """What the journal is told about the entry `name` of the locked directory that a
        change is about to replace or remove (`info`: its stat; None for a create), the
        replaced `content` when the mutation read it, `codec`: the file's text's when not
        UTF-8, and the content it will publish (`after`) when it does not hash it itself."""
        if info is None:
            return FsChangeStart(
                target=target, verb=verb, before=None, pre_image=None, codec=codec, after=after
            )
        regular = st_mode.S_ISREG(info.st_mode)
        return FsChangeStart(
            target=target,
            verb=verb,
            before=self._versions.version(info),
            pre_image=LocalReplaced(dir_fd=dir_fd, name=name, info=info) if regular else None,
            mode=st_mode.S_IMODE(info.st_mode),
            size=info.st_size if regular else None,
            uid=info.st_uid,
            gid=info.st_gid,
            content=content if regular else None,
            codec=codec,
            after=after,
        )

    def _check_directory(
        self, verb: Literal["write", "edit"], display: str, dir_fd: int, path: str
    ) -> None:
        """The guards' look at a directory the mutation is about to change, on the kernel's
        path of its open descriptor (not a path that could be swapped); guards that allow
        everything are not shown one."""
        if not self._guards.passive:
            self._guards.check_directory(verb, display, fd_path(dir_fd, path))

    def moved(self, source: str, destination: str, version: FsVersion) -> None:
        """A file was renamed from `source` to `destination` (keys), now at `version`
        (`RecentlyPublished.moved`)."""
        self._recent.moved(source, destination, version)

    def is_current_opened(
        self, key: str, opened: Opened, content: LazyContent, expected: FsVersion
    ) -> bool:
        """Whether the file opened at `key` is at `expected` (a move's check)."""
        return self._is_current(expected, opened, content, self._ours(key, opened, content))

    def _ours(self, key: str, opened: Opened, content: LazyContent) -> Published | None:
        """What this provider published last at `key`, if the file still holds exactly that:
        the file is at the version that publication made, which proves it when the
        publication was stamped and the file's inode has the generation it was published with
        (`Published.generation`), and else its bytes are compared."""
        published = self._recent.at(key, self._versions.version(opened.info))
        if published is None:
            return None
        if published.generation is not None and (
            inode_generation(opened.fd) == published.generation
        ):
            return published
        return published if content.holds(published.parts) else None

    def _is_current(
        self,
        expected: FsVersion,
        opened: Opened,
        content: LazyContent,
        ours: Published | None,
        known: bytes | None = None,
    ) -> bool:
        """`VersionBook.is_current`; when the file holds what we published at `expected`
        (bytes compared), that answers it without hashing, and so do the bytes the caller
        read at `expected` when it gives them (`known`: `VersionBook.holds`)."""
        if ours is not None and ours.version == expected:
            return True
        if known is not None:
            return self._versions.holds(expected, opened.info, content, known)
        return self._versions.is_current(expected, opened.info, content)

    @staticmethod
    def _refuse_read_only(key: str, dir_fd: int, verb: messages.Verb, display: str) -> None:
        """A file this process may not write (read-only for it) is not replaced behind its
        permission bits: an atomic replace needs only the directory's permission, an in-place
        write (what other tools do) the file's. Root may, as with an in-place write."""
        if not writable_in_place(os.path.basename(key), dir_fd):
            raise messages.permission_denied(verb, display)


@contextmanager
def _gone_without_directory(
    parent: str, display: str, gone: Callable[[str], FsError] = messages.edit_gone
) -> Iterator[None]:
    """An edit whose parent directory is missing finds no file to edit: that is
    `FS_STALE_VERSION`, like any vanished target, not `FS_NOT_FOUND` (a delete says what
    `gone` says). (A parent that is a file is `map_os_errors`' case: the path names nothing,
    as in `resolve`.)"""
    try:
        yield
    except FileNotFoundError as exc:
        if exc.filename != parent:
            raise
        raise gone(display) from exc


def _commit(
    capture: FsCapture,
    ticket: object,
    version: FsVersion,
    content: bytes | EncodedText,
    digest: bytes | None,
) -> None:
    """Commit a published change's journal entry: now, or, in a batch, once the batch has
    made the change durable (`DeferredSync`: an entry never says more than the disk does)."""
    batch = deferred_sync()
    if batch is None:
        capture.commit(ticket, version, content, digest)
        return
    batch.commit(
        partial(capture.commit, ticket, version, content, digest),
        partial(capture.abandon, ticket),
    )


def _encoded(text: str, encoding: FsEncoding, display: str) -> bytes | EncodedText:
    """A write's `text` in `encoding` (UTF-8 in pieces when large, `encode_text_parts`).

    Raises:
        FsError: as `encode_as`.
    """
    if encoding.utf8:
        return encode_text_parts(text, "write", display)
    return encode_as(text, encoding, "write", display, "content")


def _with_bom(content: str, encoding: FsEncoding) -> str:
    """`content` as a file in `encoding` holds it: with a leading U+FEFF when the encoding
    has a BOM (the model never sees it: a read hides it)."""
    if encoding.bom and not content.startswith("\ufeff"):
        return "\ufeff" + content
    return content


def _not_found_delete(display: str) -> FsError:
    return messages.not_found("delete", display)


def _edited(
    before: EncodedText, edit: FsEdit, display: str, checking: _TextCheck | None = None
) -> tuple[EncodedText, int]:
    """`edit` applied to `before`: a literal replacement on its bytes when that is the same
    edit (the result is views of them), anything else on its text (which also raises the
    match errors, with their diagnosis). Bytes still `checking` are proven text before the
    text path decodes them or says why the edit does not apply (a file that is not text
    says that first).

    Raises:
        FsError: `FS_EDIT_NOT_FOUND`, `FS_AMBIGUOUS_EDIT`, `FS_NOT_TEXT` (a replacement
            with no UTF-8 form).
    """
    if isinstance(edit, FsEditRequest):
        data = before.parts[0] if len(before.parts) == 1 else before.to_bytes()
        assert not isinstance(data, memoryview)
        edited = apply_edit_encoded(data, edit)
        if edited is not None:
            return edited
    if checking is not None:
        checking()
    text, count = apply_change(before.text, edit, display)
    return EncodedText((encode_text(text, "edit", display),), text=text), count


def _prepared(future: Future[object]) -> object | None:
    """The ticket of a journal record being made, once made; None when it failed."""
    try:
        return future.result()
    except BaseException:
        return None


class _Digest:
    """The digest of content being published. When `RecentlyPublished` will keep the
    content it is `deferred`: nothing is hashed here (see `LocalMutations._remember`). Else,
    up to `BACKGROUND_DIGEST_BYTES`, it is computed while the content is written
    (`Staged.hasher`: each piece hashed right before its `write`, no second pass, no
    thread); above that, by the provider's helper thread while the publication writes and
    waits on the disk (hashlib releases the GIL; a pool's submit costs far less than a
    thread start). A helper-thread hop for a small file cost more than the hashing it moved
    (issue 44: 1-11 ms under load, for ~0.5 ms of sha256 a MiB)."""

    def __init__(
        self, data: bytes | EncodedText, helper: ThreadPoolExecutor, *, deferred: bool
    ) -> None:
        self._parts = data.parts if isinstance(data, EncodedText) else (data,)
        self._value: bytes | Future[bytes] | None = None
        self.deferred = deferred
        """Nothing is hashed here (the digest is computed when first needed)."""
        self.hasher: hashlib._Hash | None = None
        """The running sha256 the publication feeds; None when deferred or in the helper."""
        if deferred:
            return
        if sum(len(part) for part in self._parts) <= BACKGROUND_DIGEST_BYTES:
            self.hasher = hashlib.sha256()
        else:
            self._value = helper.submit(digest_parts, self._parts)

    def result(self) -> bytes:
        """The sha256 digest, once the content is written (waits for the helper thread)."""
        if self._value is None:
            self._value = (
                self.hasher.digest() if self.hasher is not None else digest_parts(self._parts)
            )
        return self._value if isinstance(self._value, bytes) else self._value.result()

    def computed(self) -> bytes | None:
        """The digest when it is computed here (during the write or by the helper), once
        the content is written; None when deferred."""
        return None if self.deferred else self.result()


class _Beside(Generic[_T]):
    """`compute()` in the provider's helper thread, beside the publication's write and
    fsync (which release the GIL). `result()` waits for it; a computation the helper has
    not started yet (a busy machine) is taken back and run by the caller, so the caller
    never waits longer than computing it itself takes (issue 44)."""

    def __init__(self, compute: Callable[[], _T], helper: ThreadPoolExecutor) -> None:
        self._compute = compute
        self._future = helper.submit(compute)

    def result(self) -> _T:
        """The computation's value (its exception, raised)."""
        return self._compute() if self._future.cancel() else self._future.result()


class _TextCheck:
    """`check_text` of an edit's prior bytes `_Beside` the staging of the edited content.
    Calling it waits for the verdict: it returns when the bytes are text and raises
    `FS_NOT_TEXT` as the check before publication would."""

    def __init__(self, data: bytes | bytearray, display: str, helper: ThreadPoolExecutor) -> None:
        self._verdict = _Beside(partial(_text_error, data, display), helper)

    def __call__(self) -> None:
        error = self._verdict.result()
        if error is not None:
            raise error


def _text_error(data: bytes | bytearray, display: str) -> FsError | None:
    """The refusal `check_text` makes of an edit's prior `data`, or None for text."""
    try:
        check_text(data, "edit", display)
    except FsError as error:
        return error
    return None
