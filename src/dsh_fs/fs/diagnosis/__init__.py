"""The edit diagnosis (SPEC §8.2): why an `old_string` (or a patch hunk) did not match once.

When an edit misses, `diagnose_not_found` (or `diagnose_block` for a hunk, or
`diagnose_ambiguous` for several matches) finds the closest lines of the file by an
anchored alignment (`_alignment`), names what differs line by line (`_differences`,
look-alike characters in `_lookalikes`) and words it for the model within a byte budget
(`_wording`). It is part of the contract layer and imports nothing above it; `fs._edit`
imports it on the first miss, not at start-up (difflib is not needed to answer
``initialize``).
"""

from ._diagnose import Diagnosis, diagnose_ambiguous, diagnose_block, diagnose_not_found

__all__ = ["Diagnosis", "diagnose_ambiguous", "diagnose_block", "diagnose_not_found"]
