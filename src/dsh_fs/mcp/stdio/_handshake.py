"""The stdio MCP server: the handshake protocol era served directly, the 2026-07-28 era by
the SDK.

Every host speaks the handshake era today (``initialize``: Claude Code, Cursor, VS Code, the
MCP Inspector, the TypeScript SDK). This server answers it without the SDK, so `dsh-fs mcp`
answers ``initialize`` without importing it (about half a second of start-up) and a tool
call skips its per-request pipeline. A client whose first request carries the 2026-07-28
``_meta`` envelope (the Python SDK's client probes with ``server/discover``) is handed,
with everything read so far, to the SDK's server (`_sdk`), imported then.

What this server does, as the SDK's server does it (tests/mcp/test_stdio_conformance.py runs
both on the same lines and compares the answers):

- ``initialize``: the client's version when it is a handshake version, else the latest one;
  capabilities ``{"tools": {"listChanged": false}}``, ``serverInfo``, the workspace's
  system prompt as ``instructions``. ``ping`` at any time.
- ``tools/list``, ``tools/call`` once ``initialize`` (or ``notifications/initialized``)
  arrived, else ``-32602``; each call runs in its own task, reports progress when the
  request has a ``progressToken``, and stops on ``notifications/cancelled`` (then it is never
  answered). An unknown tool is ``-32602 Unknown tool: NAME``.
- Any other request: ``-32601 Method not found`` (its method in ``data``); a request with
  the 2026-07-28 envelope after the handshake: ``-32600``. Other notifications and
  responses are dropped.
- Malformed lines are answered to their id when it can be found (`_wire`); a line over the
  size limit is refused without being read whole (`_lines`).

When the input ends, every request already read is answered (a cancelled one excepted).
"""

from __future__ import annotations

import importlib.util
import logging
from collections import deque
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.abc import TaskGroup

from .._approvals import eliciting
from .._definitions import server_info, tool_definitions, tool_result
from .._progress import ProgressNotifier
from .._request_id import RequestId, is_request_id
from .._roots import ANSWER_SECONDS, RootsMode, fence_session, roots_of, withhold
from .._wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Malformed,
    Message,
    encode,
    error_response,
)
from ._lines import (
    DEFAULT_MAX_MESSAGE_SIZE,
    LineReader,
    LineWriter,
    Oversized,
    message_of,
    stdio_fds,
)

if TYPE_CHECKING:
    from dsh_fs.workspace import Session, Workspace

__all__ = [
    "HANDSHAKE_VERSIONS",
    "PROTOCOL_VERSION_META_KEY",
    "serve_lines",
    "serve_stdio",
]

logger = logging.getLogger("dsh_fs.mcp")

HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol versions reached by ``initialize``, oldest first (the SDK's, pinned by a
test: a new SDK version with a new one fails it)."""

PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key only a 2026-07-28 request envelope carries."""

_CAPABILITIES: Final = {"tools": {"listChanged": False}}

_REPLAY_LIMIT = 8
"""Notifications read before the first request that are handed to the SDK with it (as the
SDK's own server keeps them)."""


class _Refusal(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _invalid_params() -> _Refusal:
    # The SDK's words for params its models reject (no detail on the wire).
    return _Refusal(INVALID_PARAMS, "Invalid request parameters", "")


def _coerce(ident: RequestId) -> RequestId:
    """The id a ``notifications/cancelled`` matches: ``"7"`` and ``7`` are one (as in the
    SDKs)."""
    if isinstance(ident, str):
        try:
            return int(ident)
        except ValueError:
            pass
    return ident


def _has_modern_envelope(params: object) -> bool:
    if not isinstance(params, Mapping):
        return False
    meta = params.get("_meta")
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta


def _opens_modern_era(request: Message) -> bool:
    """Whether a client's first request opens the 2026-07-28 era (``initialize`` never does,
    whatever it carries)."""
    return request["method"] != "initialize" and _has_modern_envelope(request.get("params"))


def _optional(params: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = params.get(key)
    if value is not None and not isinstance(value, kind):
        raise _invalid_params()
    return value


def _progress_token(params: Mapping[str, Any]) -> RequestId | None:
    meta = _optional(params, "_meta", dict)
    token = None if meta is None else meta.get("progressToken")
    if token is not None and not is_request_id(token):
        raise _invalid_params()
    return token


class _Call:
    """A running ``tools/call``: its scope, which ``notifications/cancelled`` cancels."""

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()


class _Server:
    """One client's connection, in the handshake era.

    The task that reads a call runs it (waking another task costs a loop turn, starting one
    far more: together about a fifth of a small read's round trip). Reading goes on while
    a call waits on something: before it runs, an idle task is woken; if the call is still
    running when that task gets its turn, it takes over reading, and the caller becomes the
    idle one once its call is done. So calls still run concurrently, and a
    ``notifications/cancelled`` is read while the call it names is running.
    """

    __slots__ = (
        "_accepted",
        "_calls",
        "_client",
        "_drained",
        "_elicit_capable",
        "_elicit_count",
        "_elicits",
        "_idle",
        "_lines",
        "_names",
        "_opening",
        "_reader",
        "_reading_free",
        "_roots",
        "_roots_applied",
        "_roots_asked",
        "_roots_capable",
        "_roots_count",
        "_roots_mode",
        "_roots_ready",
        "_roots_sending",
        "_running",
        "_session",
        "_structured",
        "_tg",
        "_tools",
        "_workspace",
        "_writer",
    )

    _MAX_IDLE = 4
    """Idle tasks kept after a burst of concurrent calls; the others end."""

    def __init__(
        self,
        workspace: Workspace,
        reader: LineReader,
        writer: LineWriter,
        *,
        structured: bool,
        client_roots: RootsMode = "off",
    ) -> None:
        self._workspace = workspace
        self._roots_mode: RootsMode = client_roots
        self._roots_capable = False
        """The client declared the roots capability (and the server asks for them)."""
        self._roots_asked: dict[str, int] = {}
        """The id of the ``roots/list`` request waiting for an answer, and its number: only
        the newest one (an older one's answer is dropped), so a flood of
        ``list_changed`` keeps nothing per notification."""
        self._roots_count = 0
        """``roots/list`` requests asked for (the newest one's number)."""
        self._roots_sending = False
        """A task is sending ``roots/list``: a newer question waits for it, not a task of
        its own (a client that floods ``list_changed`` and reads nothing would pile them)."""
        self._roots_applied = 0
        """The number of the latest request whose answer is in force."""
        self._roots_ready: anyio.Event | None = None
        """Set once the client answered the first ``roots/list`` (None: not asked)."""
        self._roots: list[str] = []
        """The client's latest roots (none until it answers)."""
        self._elicit_capable = False
        """The client declared the elicitation capability: changes that need an approval
        are put to it (SPEC §11.2)."""
        self._elicits: dict[str, tuple[anyio.Event, list[object]]] = {}
        """The ``elicitation/create`` requests waiting for an answer, by id: the event set
        when it arrives and where it is put."""
        self._elicit_count = 0
        self._reader = reader
        self._writer = writer
        self._structured = structured
        self._accepted = False
        """`initialize` was answered, or `notifications/initialized` arrived."""
        self._client: str | None = None
        """The client's name from `initialize` (labels its changes in the journal)."""
        self._opening: list[Message] | None = []
        """The notifications before the first request (None once it decided the era)."""
        self._lines: deque[bytes | Oversized] = deque()
        """Lines read and not dispatched yet."""
        self._calls: dict[RequestId, _Call] = {}
        self._running = 0
        self._drained = anyio.Event()
        self._drained.set()
        self._reading_free = False
        """The task that reads is running a call: whoever gets the next turn reads."""
        self._idle: list[anyio.Event] = []
        self._session: Session | None = None
        self._tools: list[dict[str, Any]] | None = None
        self._names: frozenset[str] = frozenset()
        self._tg: TaskGroup | None = None

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            await self._serve(reading=True)

    async def _serve(self, *, reading: bool) -> None:
        """One task's life: read and dispatch while it holds the reading, run the calls it
        reads, wait while idle. Once the input has ended and every call is done, the task
        that read the end cancels them all."""
        while True:
            if not reading:
                if not self._reading_free:
                    if len(self._idle) >= self._MAX_IDLE:
                        return
                    woken = anyio.Event()
                    self._idle.append(woken)
                    await woken.wait()
                    continue
                self._reading_free = False
            call = await self._next_call()
            if call is None:
                # The input ended: once every call is answered, stop the idle tasks too.
                await self._drained.wait()
                assert self._tg is not None
                self._tg.cancel_scope.cancel()
                return
            self._reading_free = True
            if self._idle:
                self._idle.pop().set()
            else:
                assert self._tg is not None
                self._tg.start_soon(partial(self._serve, reading=False))
            await self._call(*call)
            reading = self._reading_free  # nobody took over: keep reading
            self._reading_free = False

    async def _next_call(self) -> tuple[RequestId, str, dict[str, Any], RequestId | None] | None:
        """Dispatch lines until one is a call to run (returned); None at the end of input."""
        while True:
            if not self._lines:
                batch = await self._reader.batch()
                if not batch:
                    return None
                self._lines.extend(batch)
            message = message_of(self._lines.popleft())
            if isinstance(message, Malformed):
                await self._refuse(message)
                continue
            if self._opening is not None:
                if not ("id" in message and "method" in message):
                    if "method" in message and len(self._opening) < _REPLAY_LIMIT:
                        self._opening.append(message)
                elif _opens_modern_era(message):
                    await self._hand_over([*self._opening, message])
                    return None
                else:
                    self._opening = None
            call = await self._dispatch(message)
            if call is not None:
                return call

    async def _hand_over(self, opening: list[Message]) -> None:
        from .._server import create_server
        from ._sdk import serve_sdk

        logger.debug("the client opened in the 2026-07-28 era: the MCP SDK serves it")
        server = create_server(
            self._workspace,
            single_session=True,
            structured=self._structured,
            client_roots=self._roots_mode,
        )
        rest = list(self._lines)
        self._lines.clear()
        await serve_sdk(server, self._reader, self._writer, opening=opening, rest=rest)

    async def _send(self, message: Message) -> None:
        await self._writer.send(encode(message))
        if self._writer.broken and self._tg is not None:
            self._tg.cancel_scope.cancel()  # the client is gone: nothing to answer

    async def _refuse(self, malformed: Malformed) -> None:
        logger.warning("answered a malformed line with %s: %s", malformed.code, malformed.message)
        await self._send(error_response(malformed.id, malformed.code, malformed.message))

    async def _dispatch(
        self, message: Message
    ) -> tuple[RequestId, str, dict[str, Any], RequestId | None] | None:
        """Answer `message`, or return the call it asks for (checked, not run yet)."""
        method: str | None = message.get("method")
        if method is None:
            self._answered(message)  # a response: only roots/list is ever asked
            return None
        params: dict[str, Any] = message.get("params") or {}
        if "id" not in message:
            self._notified(method, params)
            return None
        ident: RequestId = message["id"]
        try:
            if method != "initialize" and _has_modern_envelope(params):
                raise _Refusal(
                    INVALID_REQUEST,
                    "this connection serves the handshake protocol era; requests carrying "
                    "the 2026-07-28 envelope are not accepted on it",
                )
            if method == "initialize":
                result = self._initialize(params)
            elif method == "ping":
                result = {}
            elif method == "tools/list":
                _optional(params, "cursor", str)
                _optional(params, "_meta", dict)
                self._gate()
                result = {"tools": self._listing()}
            elif method == "tools/call":
                name = params.get("name")
                if not isinstance(name, str):
                    raise _invalid_params()
                arguments = _optional(params, "arguments", dict) or {}
                token = _progress_token(params)
                self._gate()
                self._listing()
                if name not in self._names:
                    # The host's mistake, not the model's: a protocol error.
                    raise _Refusal(INVALID_PARAMS, f"Unknown tool: {name}")
                return ident, name, arguments, token
            else:
                raise _Refusal(METHOD_NOT_FOUND, "Method not found", method)
        except _Refusal as refusal:
            await self._send(error_response(ident, refusal.code, refusal.message, refusal.data))
            return None
        await self._send({"jsonrpc": "2.0", "id": ident, "result": result})
        return None

    def _notified(self, method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/initialized":
            self._accepted = True
            if self._roots_capable and not self._roots_asked and self._roots_ready is not None:
                self._ask_roots()
        elif method == "notifications/roots/list_changed":
            if self._roots_capable:
                # The next calls wait for the answer (at most `ANSWER_SECONDS`, as the first).
                if self._roots_ready is None or self._roots_ready.is_set():
                    self._roots_ready = anyio.Event()
                self._ask_roots()
        elif method == "notifications/cancelled":
            ident = params.get("requestId")
            if isinstance(ident, (str, int)) and not isinstance(ident, bool):
                call = self._calls.get(_coerce(ident))
                if call is not None:
                    call.scope.cancel()

    def _gate(self) -> None:
        if not self._accepted:
            raise _invalid_params()

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        client = params.get("clientInfo")
        if (
            not isinstance(requested, str)
            or not isinstance(params.get("capabilities"), dict)
            or not isinstance(client, dict)
            or not isinstance(client.get("name"), str)
            or not isinstance(client.get("version"), str)
        ):
            raise _invalid_params()
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        self._accepted = True
        self._client = client["name"]
        capabilities = params["capabilities"]
        if self._roots_mode != "off" and isinstance(capabilities.get("roots"), dict):
            self._roots_capable = True
            self._roots_ready = anyio.Event()
        self._elicit_capable = isinstance(capabilities.get("elicitation"), dict)
        return {
            "protocolVersion": version,
            "capabilities": _CAPABILITIES,
            "serverInfo": server_info(),
            "instructions": self._workspace.system_prompt(),
        }

    def _ask_roots(self) -> None:
        """Ask for the roots (``roots/list``; the answer arrives as a response, see
        `_answered`). The newest question wins: one task sends, and asks again once sent if
        a newer question came meanwhile."""
        self._roots_count += 1
        if not self._roots_sending:
            self._roots_sending = True
            assert self._tg is not None
            self._tg.start_soon(self._send_roots_requests)

    async def _send_roots_requests(self) -> None:
        try:
            sent = 0
            while sent != self._roots_count:
                sent = self._roots_count
                ident = f"dsh-fs-roots-{sent}"
                # Only the newest request is awaited: an older one's answer is dropped.
                self._roots_asked.clear()
                self._roots_asked[ident] = sent
                await self._send({"jsonrpc": "2.0", "id": ident, "method": "roots/list"})
        finally:
            self._roots_sending = False

    def _answered(self, message: Mapping[str, Any]) -> None:
        ident = message.get("id")
        waiting = self._elicits.get(ident) if isinstance(ident, str) else None
        if waiting is not None:
            done, answer = waiting
            if not done.is_set():
                answer.append(message.get("result"))  # an error: no result, no answer
                done.set()
            return
        if not isinstance(ident, str) or ident not in self._roots_asked:
            return
        number = self._roots_asked.pop(ident)
        self._roots_applied = number
        if "result" in message:
            roots = roots_of(message["result"])
        else:
            logger.warning("the client refused roots/list: %r", message.get("error"))
            roots = []
        self._roots = roots
        if self._session is not None:
            # What the session saw under a root that went away must be read again.
            fence_session(self._session, roots, self._roots_mode)
        if self._roots_ready is not None and number == self._roots_count:
            self._roots_ready.set()  # the answer to the latest question: calls go on

    async def _elicit(self, params: dict[str, Any]) -> object:
        """Send ``elicitation/create`` and wait for its answer (`_answered`); the gate
        bounds the wait, and a cancelled wait forgets the request."""
        self._elicit_count += 1
        ident = f"dsh-fs-elicit-{self._elicit_count}"
        done, answer = anyio.Event(), list[object]()
        self._elicits[ident] = (done, answer)
        try:
            message = {"jsonrpc": "2.0", "id": ident, "method": "elicitation/create"}
            await self._send({**message, "params": params})
            await done.wait()
        finally:
            del self._elicits[ident]
        return answer[0] if answer else None

    def _listing(self) -> list[dict[str, Any]]:
        if self._tools is None:
            self._tools = tool_definitions(self._workspace)
            self._names = frozenset(tool["name"] for tool in self._tools)
        return self._tools

    async def _call(
        self, ident: RequestId, name: str, arguments: dict[str, Any], token: RequestId | None
    ) -> None:
        if self._roots_ready is not None and not self._roots_ready.is_set():
            with anyio.move_on_after(ANSWER_SECONDS):
                await self._roots_ready.wait()
        if self._session is None:
            # The client's name labels the session's changes in the journal.
            label = f"{self._client}-stdio" if self._client else "mcp-stdio"
            self._session = self._workspace.session(id=label)
            if self._roots_capable:
                if self._roots_applied:
                    fence_session(self._session, self._roots, self._roots_mode)
                else:
                    # No answer in time: its roots are not known yet.
                    withhold(self._session, self._roots_mode)
        key = _coerce(ident)
        call = _Call()
        self._calls[key] = call
        if self._running == 0:
            self._drained = anyio.Event()
        self._running += 1
        progress = None if token is None else ProgressNotifier(partial(self._progress, token))
        gate = self._workspace.approvals
        approver = None
        if gate.active and self._elicit_capable:
            approver = eliciting(self._elicit, progress, gate.timeout)
        try:
            # A cancelled call stops at its next await and, like any cancelled call,
            # records no observation and no partial file; it is never answered.
            with call.scope:
                result = await self._session.call(
                    name, arguments, call_id=str(ident), progress=progress, approver=approver
                )
        except Exception:
            logger.exception("tools/call %s raised", name)
            await self._send(error_response(ident, INTERNAL_ERROR, "Internal error"))
            return
        finally:
            if self._calls.get(key) is call:
                del self._calls[key]
            self._running -= 1
            if self._running == 0:
                self._drained.set()
        if call.scope.cancel_called:
            return
        if result.is_error:
            logger.info("%s refused (%s): %s", name, result.code, result.text)
        answer = tool_result(result, structured=self._structured)
        await self._send({"jsonrpc": "2.0", "id": ident, "result": answer})

    async def _progress(
        self, token: RequestId, progress: float, total: float | None, message: str | None
    ) -> None:
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


async def serve_lines(
    workspace: Workspace,
    reader: LineReader,
    writer: LineWriter,
    *,
    structured: bool = False,
    client_roots: RootsMode = "off",
) -> None:
    """Serve one MCP client over `reader`'s and `writer`'s lines until the input ends.

    Args:
        workspace: The tools, their schemas and the instructions come from here; one
            workspace `Session` owns every observation (one client).
        reader: The client's lines.
        writer: Where the answers go.
        structured: Also return each result's canonical value as ``structuredContent``.
        client_roots: What a client's MCP roots do to a sandbox's fence (see `_roots`):
            nothing (``off``), replace it (``replace``), or narrow it (``narrow``).
    """
    server = _Server(workspace, reader, writer, structured=structured, client_roots=client_roots)
    await server.run()


async def serve_stdio(
    workspace: Workspace,
    *,
    structured: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    client_roots: RootsMode = "off",
) -> None:
    """Serve `workspace` over stdin/stdout until the client closes the pipe.

    Args:
        workspace: The workspace served (see `serve_lines`).
        structured: Also return each result's canonical value as ``structuredContent``.
        max_message_size: Bytes a message may have; a longer one is refused (to its id when
            it can be found) without being read whole.
        client_roots: What a client's MCP roots do to a sandbox's fence (`serve_lines`).

    Raises:
        ModuleNotFoundError: the MCP SDK is not installed (a client opening in the
            2026-07-28 era needs it; the check does not import it).
    """
    if importlib.util.find_spec("mcp") is None:
        raise ModuleNotFoundError("No module named 'mcp'", name="mcp")
    with stdio_fds() as (wire_in, wire_out):
        reader = LineReader(wire_in, limit=max_message_size)
        try:
            await serve_lines(
                workspace,
                reader,
                LineWriter(wire_out),
                structured=structured,
                client_roots=client_roots,
            )
        finally:
            reader.close()
