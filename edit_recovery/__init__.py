"""The edit-recovery corpus and its runner (`make edit-recovery`, SPEC §8.2).

Realistic ways a model's old_string misses (indentation, tabs, trailing whitespace, read's
line-number prefixes, look-alike characters, escapes, a misremembered token, a missing or
extra line, an edit already applied), ambiguous edits, and controls, over sample files in
several languages. The runner sends each through the real tools on a real local workspace
and checks that the diagnosis names the right lines and cause and that nothing is written.
"""
