"""The tool for PydanticAI (``pip install 'history-search[pydantic-ai]'``, which is ``pydantic-ai-slim``)::

    from pydantic_ai import Agent
    from history_search.adapters.pydantic_ai import pydantic_ai_tool

    agent = Agent(model, tools=[pydantic_ai_tool(AsyncSearch(conn, run))])

A ``pydantic_ai.Tool`` built with ``Tool.from_schema`` on the tool's JSON
Schema. Arguments the model can fix (a bad value, ``after`` later than
``before``) raise ``ModelRetry``, so PydanticAI asks the model to correct the
call; an ended or unknown run raises ``ToolFailed`` (the model sees the
failure but is not told to retry). A database failure propagates.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry, Tool
from pydantic_ai.exceptions import ToolFailed

from ..tool import TOOL_DESCRIPTION, TOOL_NAME, ToolCallError, tool_schema
from . import SearchSource, dumps, ended_run, run_any

__all__ = ["pydantic_ai_tool"]


def pydantic_ai_tool(search: SearchSource, *, strict: bool = False) -> Tool[Any]:
    """``search_history`` bound to ``search``'s run, as a PydanticAI ``Tool``."""

    async def search_history(**arguments: Any) -> str:
        try:
            return dumps(await run_any(search, arguments))
        except ToolCallError as exc:
            if ended_run(exc):
                raise ToolFailed(exc.message) from None
            raise ModelRetry(exc.message) from None

    return Tool[Any].from_schema(search_history, name=TOOL_NAME, description=TOOL_DESCRIPTION,
                                 json_schema=tool_schema(strict))
