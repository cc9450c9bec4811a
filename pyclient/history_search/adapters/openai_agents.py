"""The tool for the OpenAI Agents SDK (``pip install 'history-search[openai-agents]'``)::

    from agents import Agent
    from history_search.adapters.openai_agents import openai_agents_tool

    agent = Agent(name="helper", tools=[openai_agents_tool(Search(conn, run))])

An ``agents.FunctionTool`` with the tool's strict schema (the SDK's default,
``strict_json_schema=True``; ``strict=False`` publishes the loose one). What the
model got wrong comes back as the tool's output, ``{"error", "code"}`` as JSON:
the Agents SDK's channel for errors the model should see (an exception would
end the run). A database failure raises, and the SDK's own failure handling
takes it from there (by default the model sees only "An error occurred").
"""

from __future__ import annotations

from typing import Any

from agents import FunctionTool, RunContextWrapper

from ..tool import TOOL_DESCRIPTION, TOOL_NAME, ToolCallError, tool_schema
from . import SearchSource, dumps, run_any

__all__ = ["openai_agents_tool"]


def openai_agents_tool(search: SearchSource, *, strict: bool = True) -> FunctionTool:
    """``search_history`` bound to ``search``'s run, as an Agents SDK ``FunctionTool``."""

    async def invoke(ctx: RunContextWrapper[Any], arguments: str) -> str:
        try:
            return dumps(await run_any(search, arguments))
        except ToolCallError as exc:
            return dumps(exc.to_dict())

    return FunctionTool(name=TOOL_NAME, description=TOOL_DESCRIPTION, params_json_schema=tool_schema(strict),
                        on_invoke_tool=invoke, strict_json_schema=strict)
