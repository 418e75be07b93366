"""The review page (SPEC §11.1): `dsh-fs review` serves the journal to a browser, where the
person whose files they are sees every agent session and change, with its diff, and takes
back a session, a change or one hunk through the journal's guarded undo.

Top layer, below `dsh_fs.cli` and above `dsh_fs.mcp` (whose HTTP server's ``Host``/``Origin``
checks it reuses) and `dsh_fs.workspace` (whose `Journal` it reads and undoes through).
Server-rendered HTML and one small script of its own (`static/`), no build step, nothing
fetched from elsewhere. Needs the ``mcp`` extra (Starlette and uvicorn).
"""

from ._review_app import TOKEN_HEADER, Review, ReviewSource, review_app
from ._review_server import review_url, serve_review

__all__ = ["TOKEN_HEADER", "Review", "ReviewSource", "review_app", "review_url", "serve_review"]
