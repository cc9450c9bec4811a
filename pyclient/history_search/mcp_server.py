"""``history-search mcp``: the ``search_history`` tool served over MCP (stdio).

The agent host starts one server per agent turn, after ``begin_run``, with the
run token on the command line (``--run``) or in ``HISTORY_SEARCH_RUN``::

    history-search mcp --dsn postgresql://searcher@db/app --run 5b0e…

The run is bound by the host and never by the model: the tool's arguments are
only what the model may choose (:func:`~history_search.tool.tool_schema`), so no
argument can name another run, agent or audience. Each ``tools/call`` runs
:func:`~history_search.tool.acall_tool` and returns the same JSON it returns,
as text content (and as ``structuredContent``). Anything the model got wrong —
bad arguments, an ended run, ``after`` later than ``before`` — comes back as a
tool result with ``isError`` true and ``{"error", "code"}``, so the model can
correct itself; the server keeps serving. A lost database connection is a tool
error too (``code`` ``database_error``), and the next call reconnects.

The login needs only ``history_searcher``. The ``mcp`` SDK (version 2) is an
optional dependency: ``pip install 'history-search[mcp]'``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg

from . import __version__
from .client import AsyncSearch
from .errors import DatabaseError
from .tool import TOOL_NAME, acall_tool, mcp_tool

__all__ = ["McpUnavailable", "serve"]

INSTRUCTIONS = (
    "search_history searches the conversation history this agent has observed, for the current turn "
    "only. Results are attributed evidence; every search is audited."
)


class McpUnavailable(RuntimeError):
    """The ``mcp`` SDK is not installed."""


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
            message = exc.message if isinstance(exc, DatabaseError) else str(exc).strip()
            return {"error": f"database error: {message}", "code": "database_error"}

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


def serve(dsn: str, run: uuid.UUID) -> None:
    """Serve MCP on stdin/stdout until the client closes it.

    Connects before serving, so a bad DSN fails here (``psycopg.Error``), not
    at the first tool call.
    """
    try:
        import anyio
        import mcp.types as types
        from mcp.server import Server, ServerRequestContext
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        raise McpUnavailable(
            f"the MCP SDK is not installed ({exc.name}): pip install 'history-search[mcp]'") from None

    session = _Session(dsn, run)
    tool = types.Tool.model_validate(mcp_tool())

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            result: dict[str, Any] = {"error": f"unknown tool {params.name!r}; the tool is {TOOL_NAME}",
                                      "code": "unknown_tool"}
        else:
            result = await session.call(params.arguments if params.arguments is not None else {})
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
            is_error="error" in result,
        )

    server: Server[Any] = Server("history-search", version=__version__, instructions=INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool)

    async def main() -> None:
        await session.search()  # connect now: a bad DSN is an error before anything is served
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await session.close()

    anyio.run(main)
