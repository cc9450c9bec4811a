"""``search_history`` as a native tool of four agent frameworks, bound to one run.

Each adapter is a thin optional extra: the framework is imported only by its
own module, so ``import history_search`` never needs it.

=====================================  ==============================  ===================================
module                                 returns                         the model's mistakes arrive as
=====================================  ==============================  ===================================
:mod:`.openai_agents`                  ``agents.FunctionTool``         the tool's output (a string the SDK
 (``history-search[openai-agents]``)                                   sends back to the model)
:mod:`.langchain`                      ``StructuredTool``              ``ToolException`` (``handle_tool_error``:
 (``history-search[langchain]``)                                       a ``ToolMessage`` with status ``error``)
:mod:`.pydantic_ai`                    ``pydantic_ai.Tool``            ``ModelRetry`` (bad arguments, a bad
 (``history-search[pydantic-ai]``)                                     window) or ``ToolFailed`` (ended run)
:mod:`.llamaindex`                     ``FunctionTool`` with a real    an exception, which LlamaIndex's agents
 (``history-search[llamaindex]``)      ``fn_schema``                   turn into an ``is_error`` ``ToolOutput``
=====================================  ==============================  ===================================

Every adapter takes a :class:`~history_search.Search` or
:class:`~history_search.AsyncSearch` bound to the turn's run (the run token is
the runtime's, never an argument the model sees), publishes the tool's own
JSON Schema (:func:`~history_search.tool.tool_schema`; ``strict=True`` for the
strict variant), validates the model's arguments with
:func:`~history_search.tool.parse_arguments` and returns the result as JSON
text (the same JSON as :func:`~history_search.call_tool`). Error messages never
carry the run token. Infrastructure failures
(:class:`~history_search.DatabaseError`) are not the model's to fix: they
propagate to the runtime, except in LlamaIndex, whose agents hand every
exception to the model — there they become a generic "database reason" error.
"""

from __future__ import annotations

import json
from typing import Any

from ..client import AsyncSearch, Search
from ..tool import ToolCallError, arun_tool, run_tool

__all__ = ["SearchSource", "dumps"]

SearchSource = Search | AsyncSearch


def dumps(result: dict[str, Any]) -> str:
    """The tool's result as the JSON text the model reads."""
    return json.dumps(result, ensure_ascii=False)


async def run_any(search: SearchSource, arguments: Any) -> dict[str, Any]:
    """:func:`run_tool` for either kind of search; a sync one runs in a worker thread."""
    if isinstance(search, AsyncSearch):
        return await arun_tool(search, arguments)
    import asyncio

    return await asyncio.to_thread(run_tool, search, arguments)


def ended_run(exc: ToolCallError) -> bool:
    """The run is over: retrying cannot help (HS002)."""
    return exc.code == "HS002"
