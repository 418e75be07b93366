"""`LocalGuards`: the checks a wrapper makes on what the local provider really opens and where
it really publishes or removes.

A path checked before a call can be swapped (for a symbolic link to elsewhere) before the
provider uses it. These checks see the kernel's own path of what was opened or locked, so a
wrapper such as the sandbox fence catches the swap. They are passed to `LocalFileSystem`
when it is built, and the provider calls them on every open of content, every
publication and every removal: no call can skip them.
"""

from __future__ import annotations

from dsh_fs.fs import messages

__all__ = ["UNGUARDED", "LocalGuards"]


class LocalGuards:
    """Checks on the kernel's view of an operation; this base class allows everything.

    Each check receives the display path (for its message) and a path the kernel reported for
    an open descriptor (``/proc/self/fd``), never one that could have been swapped. Raising an
    `FsError` refuses the operation before it reads a byte or publishes anything.
    """

    confined: bool = False
    """Whether `may_see` can refuse anything (when False, a search need not compute the
    canonical paths of what it found)."""

    @property
    def passive(self) -> bool:
        """Whether these are the base class's guards, which allow everything without
        looking: then nobody asks the kernel for a path to show them (a ``/proc`` readlink
        per check, three per write). Any subclass may refuse, so it is always shown one."""
        return type(self) is LocalGuards

    def check_open(self, verb: messages.Verb, display: str, opened: str) -> None:
        """A regular file was opened to read its content (a read, or an edit's prior file),
        or a directory to walk below it; `opened` is its kernel path. (A write's prior file
        is asked `may_reveal` instead: a write reads it only to compare versions and to
        report it.)

        Raises:
            FsError: refuse to read it (the descriptor is closed by the caller).
        """

    def may_reveal(self, opened: str) -> bool:
        """Whether a write's outcome may carry the prior text of the file it replaces, opened
        at kernel path `opened` (a write may replace what it may not show). `resolve` asks it
        too, with the resolved path, before it says that a path through a file names nothing."""
        del opened
        return True

    def may_see(self, real: str) -> bool:
        """Whether a file a search found, at canonical path `real`, may be reported (a
        searcher that walks by path can be sent elsewhere by a link swapped in mid-walk)."""
        del real
        return True

    def check_directory(self, verb: messages.Verb, display: str, directory: str) -> None:
        """A write or edit is about to change the directory whose kernel path is `directory`:
        create a missing parent in it, or (its lock held) sweep staging residue and stage.
        This comes before any change, so a refused call changes nothing anywhere.

        Raises:
            FsError: refuse the mutation; nothing was created or removed.
        """

    def check_publish(self, verb: messages.Verb, display: str, directory: str) -> None:
        """A write or edit is about to publish into the locked directory whose kernel path is
        `directory` (locks held, right before the rename or link).

        Raises:
            FsError: refuse the publication; nothing is published, the staged copy is removed.
        """

    def check_delete(self, display: str, directory: str) -> None:
        """A delete (or a move, for its source) is about to remove an entry of the locked
        directory whose kernel path is `directory` (locks held, right before the unlink).

        Raises:
            FsError: refuse the removal; nothing is removed.
        """


UNGUARDED = LocalGuards()
"""The guards of a plain `LocalFileSystem`: none."""
