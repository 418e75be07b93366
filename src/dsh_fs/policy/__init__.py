"""The policy layer: the observation policy plugin (SPEC §5) and the path rules' plugin
(§10), which answers the mutation intents before it.

It sits above the provider contract (`dsh_fs.fs`), whose fs/* events it listens to, and
beside the tools, which dispatch those events without knowing who answers. It never imports
a provider, never does I/O and never looks up a service: freshness itself is enforced by
the provider's compare-and-swap; the policy only decides which guard a mutation carries.
Its state lives in an `ObservationLedger` (`dsh_fs.fs`), the only I/O it awaits:
`MemoryLedger` by default, a shared one (the providers' `RedisLedger`) for a fleet (§14).
"""

from ._memory_ledger import MemoryLedger
from ._observation import ObservationPolicy
from ._rules import RulesPlugin

__all__ = ["MemoryLedger", "ObservationPolicy", "RulesPlugin"]
