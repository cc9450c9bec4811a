"""``history-search mcp``: the ``search_history`` tool served over MCP.

Two transports, one tool:

* **Streamable HTTP** (``--http HOST:PORT``): one long-lived server for many
  agent turns at once, over a connection pool. Start-up is paid once. Each
  HTTP request names its run with ``Authorization: Bearer <run token>``, set
  by the host (the agent runtime that called ``begin_run``), never by the
  model: the run token is the capability, and the tool's arguments cannot name
  another run. A request without a token, with one that is not a run token, or
  with the token of an unknown or ended run is refused with HTTP 401 and a
  JSON-RPC error that says which (and never repeats the token); it reaches no
  tool. Loopback (``127.0.0.1``) by default, with the SDK's DNS-rebinding
  protection; the server speaks plain HTTP, so anything beyond one machine
  needs TLS in front of it (README, "Agent runtime").
* **stdio** (``--run TOKEN``): one run per process, for hosts that spawn a
  server per turn. The run is checked before anything is served: an unknown
  or ended run is a one-line error and exit 2.

A run is checked the first time the server sees its token, with
``history.run_status`` (it reads the run, writes nothing and spends no search
or budget). A run that ends
later is found by its next search, whose tool error says "the run has ended";
from then on its token is refused like an unknown one.

Each ``tools/call`` runs :func:`~history_search.tool.acall_tool` and returns
its JSON as text content and as ``structuredContent`` (the tool declares its
``outputSchema`` and ``annotations``, :func:`~history_search.tool.mcp_tool`).
Anything the model got wrong — bad arguments, an ended run, ``after`` later
than ``before`` — is a tool result with ``isError`` true and
``{"error", "code"}``, so the model can correct itself; the server keeps
serving. A database failure is a tool error too (``code``
``database_error``, its details logged on stderr, not shown to the model).

The login needs only ``history_searcher``. The ``mcp`` SDK (version 2.3 or a
later 2.x) is an optional dependency: ``pip install 'history-search[mcp]'``.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import ipaddress
import json
import logging
import sys
import uuid
from typing import Any, Awaitable, Callable

import psycopg

from . import __version__
from .client import AsyncSearch
from .errors import DatabaseError, UnknownRun
from .tool import TOOL_NAME, acall_tool, mcp_tool

__all__ = ["McpUnavailable", "RunRefused", "parse_listen", "serve", "serve_http"]

log = logging.getLogger("history_search.mcp")

INSTRUCTIONS = (
    "search_history searches the conversation history this agent has observed, for the current turn "
    "only. Results are attributed evidence; every search is audited."
)

#: the request scope key under which the HTTP front door leaves the request's run
_RUN_KEY = "history_search.run"
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class McpUnavailable(RuntimeError):
    """The ``mcp`` SDK is not installed."""


class RunRefused(Exception):
    """The run is unknown or has ended (message safe to show anyone: no token)."""


def _import_sdk() -> Any:
    try:
        import mcp.types as types
        from mcp.server import Server  # noqa: F401
    except ImportError as exc:
        raise McpUnavailable(
            f"the MCP SDK is not installed ({exc.name}): pip install 'history-search[mcp]'") from None
    return types


def _database_error(exc: BaseException) -> dict[str, Any]:
    """A failure of the database as the model sees it: no DSN, host or role names, only that it failed."""
    log.error("search failed: %s", " ".join(str(exc).split()) or type(exc).__name__)
    sqlstate = getattr(exc, "sqlstate", None) or getattr(getattr(exc, "__cause__", None), "sqlstate", None)
    suffix = f" (SQLSTATE {sqlstate})" if sqlstate else ""
    return {"error": f"the search failed for a database reason{suffix}; try again later",
            "code": "database_error"}


async def _check_run(search: AsyncSearch) -> None:
    """Raise :class:`RunRefused` unless ``search``'s run is open (``history.run_status``: no search, no audit)."""
    try:
        status = await search.status()
    except UnknownRun:
        raise RunRefused("the run is unknown") from None
    if status != "open":
        raise RunRefused("the run has ended")


def _build_server(types: Any, tool_def: dict[str, Any],
                  call: Callable[[Any, Any], Awaitable[dict[str, Any]]]) -> Any:
    """The low-level MCP server: one tool, ``call(ctx, arguments)`` runs it."""
    from mcp.server import Server, ServerRequestContext

    tool = types.Tool.model_validate(tool_def)

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            result: dict[str, Any] = {"error": f"unknown tool {params.name[:64]!r}; the tool is {TOOL_NAME}",
                                      "code": "unknown_tool"}
        else:
            result = await call(ctx, params.arguments if params.arguments is not None else {})
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
            is_error="error" in result,
        )

    return Server("history-search", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


# --------------------------------------------------------------------------
# stdio: one run per process
# --------------------------------------------------------------------------


class _Session:
    """The run's search over one autocommit connection, reopened after a connection loss."""

    def __init__(self, dsn: str, run: uuid.UUID):
        self.dsn = dsn
        self.run = run
        self.conn: psycopg.AsyncConnection[Any] | None = None

    async def search(self) -> AsyncSearch:
        if self.conn is None or self.conn.closed or self.conn.broken:
            self.conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        return AsyncSearch(self.conn, self.run)

    async def call(self, arguments: Any) -> dict[str, Any]:
        try:
            return await acall_tool(await self.search(), arguments)
        except (DatabaseError, psycopg.Error) as exc:
            return _database_error(exc)

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


def serve(dsn: str, run: uuid.UUID, *, strict: bool = False) -> None:
    """Serve MCP on stdin/stdout for one run until the client closes it.

    Connects and checks the run before serving: a bad DSN fails here
    (``psycopg.Error``), an unknown or ended run with :class:`RunRefused`.
    """
    types = _import_sdk()
    import anyio
    from mcp.server.stdio import stdio_server

    session = _Session(dsn, run)

    async def call(ctx: Any, arguments: Any) -> dict[str, Any]:
        return await session.call(arguments)

    server = _build_server(types, mcp_tool(strict), call)

    async def main() -> None:
        try:
            await _check_run(await session.search())  # before anything is served
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await session.close()

    anyio.run(main)


# --------------------------------------------------------------------------
# Streamable HTTP: many runs, one server
# --------------------------------------------------------------------------


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1) as ``(host, port)``.

    Port 0 lets the system choose a free port (the server prints the one it got).
    """
    host, port_text = "127.0.0.1", text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1:end + 2] != ":":
            raise ValueError(f"--http {text[:80]!r} is not HOST:PORT (IPv6: [::1]:8765)")
        host, port_text = text[1:end], text[end + 2:]
    elif ":" in text:
        head, _, port_text = text.rpartition(":")
        if ":" in head:
            raise ValueError(f"--http {text[:80]!r}: write an IPv6 address in brackets, e.g. [::1]:8765")
        host = head or host
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--http {text[:80]!r}: port {port_text[:20]!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"--http {text[:80]!r}: port {port} is out of range (0-65535)")
    if not host:
        raise ValueError(f"--http {text[:80]!r}: no host")
    return host, port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _RunGate:
    """Which bearer tokens name an open run: each checked once with the database, then remembered.

    A token refused stays refused (an ended run never reopens); one found
    ended by a search is moved to refused. Bounded: the oldest entries are
    forgotten first (a forgotten open run is checked again).
    """

    def __init__(self, pool: Any, size: int = 100_000):
        self.pool = pool
        self.size = size
        self.verdicts: collections.OrderedDict[uuid.UUID, str | None] = collections.OrderedDict()
        self.pending: dict[uuid.UUID, asyncio.Future[str | None]] = {}

    def _remember(self, run: uuid.UUID, refusal: str | None) -> None:
        self.verdicts[run] = refusal
        self.verdicts.move_to_end(run)
        while len(self.verdicts) > self.size:
            self.verdicts.popitem(last=False)

    def ended(self, run: uuid.UUID) -> None:
        self._remember(run, "the run has ended")

    async def refusal(self, run: uuid.UUID) -> str | None:
        """None when the run is open, else why not (no token in it)."""
        if run in self.verdicts:
            return self.verdicts[run]
        if run in self.pending:  # a concurrent first request of the same run: one check
            return await asyncio.shield(self.pending[run])
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.pending[run] = future
        try:
            try:
                await _check_run(AsyncSearch(self.pool, run))
                verdict = None
            except RunRefused as exc:
                verdict = str(exc)
            self._remember(run, verdict)
            future.set_result(verdict)
            return verdict
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        finally:
            del self.pending[run]


def _token_digest(run: uuid.UUID) -> str:
    return hashlib.sha256(str(run).encode()).hexdigest()


class _FrontDoor:
    """ASGI: authorise each HTTP request by its bearer run token, then hand it to the MCP app."""

    def __init__(self, app: Any, gate: _RunGate, path: str):
        self.app = app
        self.gate = gate
        self.path = path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        authorization = None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                authorization = value.decode("latin-1")
        scheme, _, credential = (authorization or "").strip().partition(" ")
        if not authorization:
            await self._refuse(send, "no run token: the host must send Authorization: Bearer <run token>")
            return
        if scheme.lower() != "bearer":
            await self._refuse(send, "the Authorization header is not a Bearer run token")
            return
        try:
            run = uuid.UUID(credential.strip())
        except ValueError:
            await self._refuse(send, "the bearer token is not a run token")
            return
        try:
            refusal = await self.gate.refusal(run)
        except (DatabaseError, psycopg.Error) as exc:
            log.error("run check failed: %s", " ".join(str(exc).split()))
            await self._respond(send, 503, "the run could not be checked for a database reason; try again later")
            return
        if refusal is not None:
            await self._refuse(send, refusal)
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        # The SDK binds a legacy (Mcp-Session-Id) session to the credential that opened it:
        # another run's token cannot use it.
        digest = _token_digest(run)
        user = AuthenticatedUser(AccessToken(token=digest, client_id="history-search-run", scopes=[],
                                             subject=digest))
        await self.app({**scope, "user": user, _RUN_KEY: run}, receive, send)

    async def _refuse(self, send: Any, message: str) -> None:
        await self._respond(send, 401, message, ((b"www-authenticate", b'Bearer realm="history-search"'),))

    @staticmethod
    async def _respond(send: Any, status: int, message: str,
                       headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32001 if status == 401 else -32603, "message": message}}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()), *headers]})
        await send({"type": "http.response.body", "body": body})


def serve_http(dsn: str, host: str = "127.0.0.1", port: int = 8765, *, pool_size: int = 10,
               strict: bool = False, path: str = "/mcp",
               on_listening: Callable[[str], None] | None = None) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until interrupted (SIGINT/SIGTERM).

    Connects before listening, so a bad DSN fails here (``psycopg.Error``).
    ``on_listening(url)`` is called once the socket is bound (with the real
    port when ``port`` is 0).
    """
    types = _import_sdk()
    import uvicorn
    from psycopg_pool import AsyncConnectionPool

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)  # a clear error for a bad DSN
        await conn.close()
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            dsn, kwargs={"autocommit": True}, min_size=1, max_size=pool_size, open=False,
            check=AsyncConnectionPool.check_connection, name="history-search-mcp")
        await pool.open(wait=True, timeout=30)
        gate = _RunGate(pool)

        async def call(ctx: Any, arguments: Any) -> dict[str, Any]:
            request = getattr(ctx, "request", None)
            run = request.scope.get(_RUN_KEY) if request is not None else None
            if not isinstance(run, uuid.UUID):  # not through the front door: refuse, never guess
                return {"error": "no run is bound to this request", "code": "HS002"}
            try:
                result = await acall_tool(AsyncSearch(pool, run), arguments)
            except (DatabaseError, psycopg.Error) as exc:
                return _database_error(exc)
            if result.get("code") == "HS002":
                gate.ended(run)
            return result

        server = _build_server(types, mcp_tool(strict), call)
        app = server.streamable_http_app(streamable_http_path=path, json_response=True, host=host)
        front = _FrontDoor(app, gate, path)
        config = uvicorn.Config(front, host=host, port=port, lifespan="on", log_level="warning",
                                access_log=False, server_header=False)
        web = uvicorn.Server(config)
        try:
            serving = asyncio.ensure_future(web.serve())
            while not web.started and not serving.done():
                await asyncio.sleep(0.02)
            if web.started and on_listening is not None:
                bound = web.servers[0].sockets[0].getsockname()[1]
                shown = f"[{host}]" if ":" in host else host
                on_listening(f"http://{shown}:{bound}{path}")
            try:
                await serving
            except SystemExit:  # uvicorn's way of saying it could not bind (it logged why)
                raise OSError(f"could not listen on {host}:{port}") from None
        finally:
            await pool.close()

    asyncio.run(main())


def print_listening(url: str) -> None:
    print(f"history-search mcp: serving MCP at {url} (Authorization: Bearer <run token>)",
          file=sys.stderr, flush=True)
