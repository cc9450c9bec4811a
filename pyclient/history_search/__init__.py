"""history-search: conversation-history search for AI agents, built inside PostgreSQL.

The public names, importable from the package itself::

    from history_search import Runtime, Search, call_tool, tool_schema

* :class:`Runtime`, :class:`Search`, :class:`Auditor` (and their ``Async…``
  twins): the trusted runtime's calls, the model-side search bound to one run,
  and the audit views (:mod:`history_search.client`);
* :func:`call_tool` / :func:`acall_tool`, :func:`tool_schema` and the tool
  definitions for OpenAI, Anthropic and MCP (:mod:`history_search.tool`);
* :func:`to_prompt`: a search result as the text an agent reads;
* the result dataclasses and the typed errors (one class per ``HS`` SQLSTATE).
"""

__version__ = "0.7.0"

from .client import AsyncAuditor, AsyncRuntime, AsyncSearch, Auditor, Runtime, Search
from .errors import (Conflict, DatabaseError, DeliveryBlocked, HistorySearchError, InvalidArgument,
                     NotFound, SearchInTransaction, UnknownRun)
from .models import DeliveryProblem, Neighbour, RankingReasons, SearchHit, SearchResult
from .prompt import to_prompt
from .tool import (TOOL_ANNOTATIONS, TOOL_DESCRIPTION, TOOL_NAME, ToolArgumentError, ToolCallError, acall_tool,
                   anthropic_tool, arun_tool, call_tool, mcp_tool, openai_responses_tool, openai_tool, output_schema,
                   run_tool, tool_schema)

__all__ = [
    "TOOL_ANNOTATIONS",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "AsyncAuditor",
    "AsyncRuntime",
    "AsyncSearch",
    "Auditor",
    "Conflict",
    "DatabaseError",
    "DeliveryBlocked",
    "DeliveryProblem",
    "HistorySearchError",
    "InvalidArgument",
    "Neighbour",
    "NotFound",
    "RankingReasons",
    "Runtime",
    "Search",
    "SearchHit",
    "SearchInTransaction",
    "SearchResult",
    "ToolArgumentError",
    "ToolCallError",
    "UnknownRun",
    "__version__",
    "acall_tool",
    "anthropic_tool",
    "arun_tool",
    "call_tool",
    "mcp_tool",
    "openai_responses_tool",
    "openai_tool",
    "output_schema",
    "run_tool",
    "to_prompt",
    "tool_schema",
]
