"""A real S3-compatible server on loopback for the tests: moto's S3 in a werkzeug thread.

`S3Server` binds 127.0.0.1 on a free port, answers the S3 REST API (conditional writes
included) and hands out storage options, boto3 clients and fresh buckets. Credentials are
dummies and every request goes to the loopback endpoint: nothing ever reaches AWS.

moto checks a conditional PUT's precondition and stores the object in two steps, without a
lock, so two racing PUTs could both pass. Real S3 decides each PUT atomically; the server
here serializes requests through one lock so it is linearizable too, and a race test shows
the provider's guard rather than a moto quirk.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

__all__ = [
    "DUMMY_CREDENTIALS",
    "S3Server",
    "running_s3_server",
    "shared_server",
    "use_dummy_credentials",
]

DUMMY_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
"""AWS environment of a process that talks to the server: dummy keys only."""

_UNSET = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")

_buckets = itertools.count()


class S3Server:
    """moto's S3 served on 127.0.0.1 from a background thread."""

    def __init__(self) -> None:
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None

    def start(self) -> None:
        """Bind a free loopback port and serve in a daemon thread (returns once bound)."""
        from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        class QuietHandler(MotoRequestHandler):
            def log_request(self, *args: object, **kwargs: object) -> None:
                pass

        # moto's S3 application itself, not the dispatcher `moto_server` puts in front of every
        # service: that one picks the service again for each request from its Host header and
        # credential scope, listing moto's ~190 package folders twice a request (a third of
        # the server's CPU, ~1.2 ms a request); every request here is S3's.
        app = _Serialized(create_backend_app("s3"))
        self._server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="moto-s3", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None, "start() first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def storage_options(self, *, independent: bool = True) -> dict[str, Any]:
        """s3fs options for this server. `independent` bypasses fsspec's instance cache, so
        two providers built from them share nothing (as two processes would)."""
        return {
            "key": DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "secret": DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "token": DUMMY_CREDENTIALS["AWS_SESSION_TOKEN"],
            "endpoint_url": self.endpoint_url,
            "client_kwargs": {"region_name": DUMMY_CREDENTIALS["AWS_DEFAULT_REGION"]},
            "skip_instance_cache": independent,
        }

    def client(self) -> Any:
        """A plain boto3 S3 client on this server: the out-of-band writer in tests."""
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _new_client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=DUMMY_CREDENTIALS["AWS_SESSION_TOKEN"],
            region_name=DUMMY_CREDENTIALS["AWS_DEFAULT_REGION"],
        )

    @contextmanager
    def counting(self) -> Iterator[list[str]]:
        """The requests the server answers inside the block, each ``METHOD /path?query``."""
        assert self._server is not None, "start() first"
        app = self._server.app
        seen: list[str] = []

        def counted(environ: dict[str, Any], start_response: Any) -> Any:
            query = environ.get("QUERY_STRING", "")
            path = environ.get("PATH_INFO", "")
            seen.append(f"{environ['REQUEST_METHOD']} {path}{'?' if query else ''}{query}")
            return app(environ, start_response)

        self._server.app = counted
        try:
            yield seen
        finally:
            self._server.app = app

    def new_bucket(self, *, versioned: bool = False) -> str:
        """Create a fresh, empty bucket and return its name."""
        name = f"dsh-fs-{os.getpid()}-{next(_buckets)}"
        client = self.client()
        client.create_bucket(Bucket=name)
        if versioned:
            client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        return name


class _Serialized:
    """WSGI middleware running one request at a time (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self._lock:
            # Materialize the body inside the lock: the request is decided here, whole.
            return list(self._app(environ, start_response))


def use_dummy_credentials() -> None:
    """Point this process's AWS configuration at dummies: no profile, no config files."""
    os.environ.update(DUMMY_CREDENTIALS)
    os.environ["AWS_CONFIG_FILE"] = os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    for name in _UNSET:
        os.environ.pop(name, None)


@contextmanager
def running_s3_server() -> Iterator[S3Server]:
    """A private started `S3Server` (dummy credentials in the environment); stopped after."""
    use_dummy_credentials()
    server = S3Server()
    server.start()
    try:
        yield server
    finally:
        server.stop()


_shared: S3Server | None = None
_shared_lock = threading.Lock()


def shared_server() -> S3Server:
    """The test session's one server, started on first use and stopped at exit (the
    conformance backends are built outside fixtures, so they cannot ask for one)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            use_dummy_credentials()
            server = S3Server()
            server.start()
            atexit.register(server.stop)
            _shared = server
        return _shared


def main() -> None:
    """``python -m tests.s3_server``: the server in a process of its own (the fleet test's
    S3, as a real one would be): prints its endpoint URL, serves until stdin ends."""
    import sys

    with running_s3_server() as server:
        print(server.endpoint_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
