"""`RulesPlugin`: path rules (SPEC §10) decided before the observation policy.

The provider wrapper (`dsh_fs.providers.RuledFileSystem`) enforces the rules on every
primitive; this plugin answers the mutation intents first (prepended), so a write, edit,
delete or move naming a denied or protected path is refused with the rule's words, not asked
to read first. No I/O: the target's display path and key are what the rules test.
"""

from __future__ import annotations

from typing import Any

from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_MOVE_INTENT,
    FS_WRITE_INTENT,
    FsIntent,
    PathRules,
    messages,
)
from dsh_fs.runtime import Next, Plugin, PluginScope, ToolExecution

__all__ = ["RulesPlugin"]


def _verb(intent: FsIntent, default: messages.Verb) -> messages.Verb:
    actor = intent.actor
    if isinstance(actor, ToolExecution) and actor.tool == "move":
        return "move"
    return default


class RulesPlugin(Plugin[None]):
    """Refuse the mutation intents of paths the rules deny or protect.

    Args:
        rules: The compiled rules (the same the provider wrapper applies).
    """

    name = "fs-path-rules"

    def __init__(self, rules: PathRules) -> None:
        self.rules = rules
        """The rules decided on."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Prepend one listener per mutation intent."""
        rules = self.rules

        def check(intent: FsIntent, verb: messages.Verb) -> None:
            target = intent.target
            found = rules.match((target.display_path, str(target.target_key)))
            if found is not None:
                raise rules.refusal(verb, target.display_path, found)

        def listener(default: messages.Verb) -> Any:
            async def decide(intent: FsIntent, next: Next[Any]) -> Any:
                check(intent, _verb(intent, default))
                return await next()

            return decide

        scope.on_waterfall(FS_WRITE_INTENT, listener("write"), prepend=True)
        scope.on_waterfall(FS_EDIT_INTENT, listener("edit"), prepend=True)
        scope.on_waterfall(FS_DELETE_INTENT, listener("delete"), prepend=True)
        scope.on_waterfall(FS_MOVE_INTENT, listener("move"), prepend=True)
