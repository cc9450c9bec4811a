"""The tool for LlamaIndex (``pip install 'history-search[llamaindex]'``, which is ``llama-index-core``)::

    from llama_index.core.agent.workflow import FunctionAgent
    from history_search.adapters.llamaindex import llamaindex_tool

    agent = FunctionAgent(tools=[llamaindex_tool(AsyncSearch(conn, run))], llm=llm)

A ``FunctionTool`` with a real argument schema (``fn_schema`` is
:class:`SearchHistoryArguments`: ``FunctionTool.from_defaults`` on a function
taking ``**kwargs`` would publish an empty one). The model's arguments are
still validated by :func:`~history_search.tool.parse_arguments` (the same
messages as everywhere). What the model got wrong raises :class:`SearchError`
(a :class:`~history_search.tool.ToolCallError`), which LlamaIndex's agents hand
back to the model as a ``ToolOutput`` with ``is_error`` set. Those agents hand
*every* exception to the model, so a database failure becomes a generic
:class:`SearchError` ("database reason", ``code`` ``database_error``; the
original is its ``__cause__``), never the driver's text.
"""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.tools import FunctionTool, ToolMetadata
from pydantic import BaseModel, ConfigDict, Field

from ..client import AsyncSearch
from ..errors import DatabaseError
from ..tool import LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, TOOL_DESCRIPTION, TOOL_NAME, ToolCallError, run_tool
from . import SearchSource, dumps, run_any

__all__ = ["SearchError", "SearchHistoryArguments", "llamaindex_tool"]


class SearchError(ToolCallError):
    """The search failed; the message is for the model."""


class SearchHistoryArguments(BaseModel):
    """The tool's arguments (the same as :func:`~history_search.tool.tool_schema`)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="Words to look for; any of them may match. Plain words, no operators.")
    speaker: Literal["anyone", "requester", "you"] = Field(
        "anyone", description="Whose messages: 'anyone', 'requester' (the person you are answering, including "
                              "their linked accounts) or 'you' (your own earlier messages).")
    after: str | None = Field(None, description="Only messages sent at or after this time (RFC 3339, with a "
                                                "time zone, e.g. 2026-05-01T09:30:00Z).",
                              json_schema_extra={"format": "date-time"})
    before: str | None = Field(None, description="Only messages sent before this time (RFC 3339, with a time "
                                                 "zone).", json_schema_extra={"format": "date-time"})
    limit: int = Field(LIMIT_DEFAULT, ge=LIMIT_MIN, le=LIMIT_MAX,
                       description="How many hits at most (each comes with its context messages).")


def _database(exc: DatabaseError) -> SearchError:
    sqlstate = f" (SQLSTATE {exc.sqlstate})" if exc.sqlstate else ""
    error = SearchError(f"the search failed for a database reason{sqlstate}; try again later", "database_error")
    error.__cause__ = exc
    return error


def llamaindex_tool(search: SearchSource) -> FunctionTool:
    """``search_history`` bound to ``search``'s run, as a LlamaIndex ``FunctionTool``."""

    def run(**arguments: Any) -> str:
        if isinstance(search, AsyncSearch):
            raise SearchError("this search_history tool is asynchronous: call it with acall", "invalid_call")
        try:
            return dumps(run_tool(search, arguments))
        except ToolCallError as exc:
            raise SearchError(exc.message, exc.code) from None
        except DatabaseError as exc:
            raise _database(exc) from exc

    async def arun(**arguments: Any) -> str:
        try:
            return dumps(await run_any(search, arguments))
        except ToolCallError as exc:
            raise SearchError(exc.message, exc.code) from None
        except DatabaseError as exc:
            raise _database(exc) from exc

    metadata = ToolMetadata(name=TOOL_NAME, description=TOOL_DESCRIPTION, fn_schema=SearchHistoryArguments)
    return FunctionTool.from_defaults(fn=run, async_fn=arun, tool_metadata=metadata)
