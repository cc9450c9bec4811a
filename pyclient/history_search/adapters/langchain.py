"""The tool for LangChain (``pip install 'history-search[langchain]'``, which is ``langchain-core``)::

    from history_search.adapters.langchain import langchain_tool

    tools = [langchain_tool(Search(conn, run))]          # or an AsyncSearch, for ainvoke
    model.bind_tools(tools)

A ``StructuredTool`` whose ``args_schema`` is the tool's JSON Schema. What the
model got wrong raises ``ToolException`` and, with ``handle_tool_error`` on,
comes back to the model as a ``ToolMessage`` with ``status="error"`` and the
message, so it can correct the call. Results are JSON text (the
``ToolMessage`` content). A database failure propagates to the runtime.

This does not need ``langchain-mcp-adapters`` (whose releases either require
``mcp<2`` or fail to import under ``mcp`` 2): use this adapter in-process, or
keep ``langchain-mcp-adapters`` in an environment of its own and point it at
``history-search mcp --http`` (README, "LangChain and langchain-mcp-adapters").
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool, ToolException

from ..client import AsyncSearch
from ..tool import TOOL_DESCRIPTION, TOOL_NAME, ToolCallError, run_tool, tool_schema
from . import SearchSource, dumps, run_any

__all__ = ["langchain_tool"]


def langchain_tool(search: SearchSource, *, strict: bool = False) -> StructuredTool:
    """``search_history`` bound to ``search``'s run, as a LangChain ``StructuredTool``."""

    def run(**arguments: Any) -> str:
        if isinstance(search, AsyncSearch):
            raise ToolException("this search_history tool is asynchronous: call it with ainvoke")
        try:
            return dumps(run_tool(search, arguments))
        except ToolCallError as exc:
            raise ToolException(exc.message) from None

    async def arun(**arguments: Any) -> str:
        try:
            return dumps(await run_any(search, arguments))
        except ToolCallError as exc:
            raise ToolException(exc.message) from None

    return StructuredTool(name=TOOL_NAME, description=TOOL_DESCRIPTION, args_schema=tool_schema(strict),
                          func=run, coroutine=arun, handle_tool_error=True)
