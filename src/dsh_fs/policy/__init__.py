"""The policy layer: the observation policy plugin (SPEC §5) and the path rules' plugin
(§10), which answers the mutation intents before it.

It sits above the provider contract (`dsh_fs.fs`), whose fs/* events it listens to, and
beside the tools, which dispatch those events without knowing who answers. It never imports
a provider, never does I/O and never looks up a service: freshness itself is enforced by
the provider's compare-and-swap; the policy only decides which guard a mutation carries.
"""

from ._observation import ObservationPolicy
from ._rules import RulesPlugin

__all__ = ["ObservationPolicy", "RulesPlugin"]
