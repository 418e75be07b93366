"""Discovery (SPEC §8.1): `glob`, `grep` and `list`, a removable plugin on the public tool
API.

`DiscoveryPlugin` registers the three tools; leave it out and the stack has none of them.
It is built only on `dsh_fs.tools`' public API and the contract (`dsh_fs.fs`,
`dsh_fs.runtime`, `dsh_fs.errors`), and records no observation, so the policy never learns
anything from it. Its rooms: the tools (`_glob`, `_grep`, `_list`) and what they share
(`_searching`: `DiscoveryConfig`, the searched root, display paths, the time budget; the
progress of `_heartbeat`), their arguments, values and rendering (`_arguments`, `_values`,
`_render`), the pure-Python engine over `walk` and reads (`_engine`; ripgrep's ignore
rules in `_ignore`, its globs in `_globs`, its regexes compiled with RE2 in `_regex`, line
matching in `_lines`) and what a search keeps while results stream in (`_collect`). A
provider's own searcher (`FileSystem.native_grep`, `native_glob`) is used when it has one.
"""

from ._glob import GlobTool
from ._grep import GrepTool
from ._list import ListTool
from ._plugin import DiscoveryPlugin
from ._searching import DiscoveryConfig
from ._values import GlobValue, GrepMatch, GrepValue, ListEntry, ListValue

__all__ = [
    "DiscoveryConfig",
    "DiscoveryPlugin",
    "GlobTool",
    "GlobValue",
    "GrepMatch",
    "GrepTool",
    "GrepValue",
    "ListEntry",
    "ListTool",
    "ListValue",
]
