"""The ``search_history`` tool as an LLM sees it.

:func:`tool_schema` is the JSON Schema of the tool's arguments — only what the
model may choose: ``query``, ``speaker``, ``after``, ``before``, ``limit``. Who
is asking, where the answer goes and who will read it are fixed by the runtime
in the run, never by the model.

:func:`openai_tool` (Chat Completions), :func:`openai_responses_tool`
(Responses API), :func:`anthropic_tool` (Messages API) and :func:`mcp_tool`
(an MCP ``Tool``) wrap it in those APIs' tool definition shapes. With
``strict=True`` they carry :func:`tool_schema`'s strict variant, the form
OpenAI's (and Anthropic's) strict mode accepts: every property is listed in
``required``, the optional ones are typed ``["…", "null"]`` (the model sends
``null`` for "not given"), ``additionalProperties`` is false, and defaults are
said in the descriptions instead of a ``default`` keyword.

:func:`call_tool` takes the model's raw arguments (a JSON string or a dict),
validates them against the schema, calls :meth:`Search.search` and returns a
JSON-able dict. It never raises for anything the model sent: malformed JSON,
unknown keys, wrong types, naive or malformed date-times, a limit out of range,
and the server's ``HS`` errors (an ended run, ``after`` later than ``before``)
all come back as ``{"error": "<what is wrong>", "code": "..."}``, which the
runtime hands back to the model as the tool result so it can correct itself.
Only infrastructure failures (:class:`~history_search.errors.DatabaseError`:
connection lost, serialization failure) propagate, for the runtime to handle.
:func:`run_tool` / :func:`arun_tool` are the same call raising
:class:`ToolCallError` instead of returning the error dict, for the framework
adapters (:mod:`history_search.adapters`) that turn it into the framework's
own "tell the model" error. Error messages never carry the run token: an ended
or unknown run is "the run has ended" / "the run is unknown".

Metadata: :data:`TOOL_ANNOTATIONS` (MCP ``annotations``: the tool is not
read-only — each call writes an audit record and spends the turn's evidence
budget — but it never changes or deletes anything that exists, and it only
reads the deployment's own history) and :func:`output_schema` (the JSON Schema
of a successful result, MCP ``outputSchema``).

Leniency, written down: a JSON ``null`` for an optional argument means "not
given" (several function-calling modes send ``null`` for every optional
argument); ``limit`` may be a JSON number with no fractional part (``8.0``),
as JSON Schema's ``integer`` allows. Date-times follow RFC 3339 ``date-time``:
``2026-05-01T09:30:00Z`` or with an offset ``+02:00``; a space instead of ``T``
is accepted, a missing offset is not.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any, Callable, Mapping

from .client import AsyncSearch, Search
from .errors import DatabaseError, HistorySearchError, UnknownRun
from .models import SearchResult

__all__ = [
    "TOOL_ANNOTATIONS",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "TOOL_TITLE",
    "ToolArgumentError",
    "ToolCallError",
    "anthropic_tool",
    "acall_tool",
    "arun_tool",
    "call_tool",
    "mcp_tool",
    "openai_responses_tool",
    "openai_tool",
    "output_schema",
    "parse_arguments",
    "run_tool",
    "tool_schema",
]

TOOL_NAME = "search_history"
TOOL_DESCRIPTION = (
    "Search the conversation history you have observed for messages that are not already in your "
    "context. Returns attributed messages (who said what, where, when) with up to two messages of "
    "context each side, best matches first. The query's words are alternatives (any may match); "
    "only messages everyone you are replying to may see are returned. Each turn has a limited "
    "budget of returned messages: search specifically."
)
TOOL_TITLE = "Search conversation history"

#: MCP tool annotations, said honestly: a search is not read-only (it writes an
#: audit record and spends the turn's evidence budget), but it destroys nothing,
#: a repeat is not a no-op (another audit record), and it reads only this
#: deployment's own history (a closed world).
TOOL_ANNOTATIONS: dict[str, Any] = {
    "title": TOOL_TITLE,
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}

SPEAKERS = ("anyone", "requester", "you")
LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT = 1, 20, 8
#: The default of ``history.search_settings.max_query_chars``: a longer query is HS001 on the server,
#: so the schema says so and the tool refuses it before a round trip (tests/test_tool.py pins the two).
QUERY_MAX_CHARS = 4000

_PROPERTIES = ("query", "speaker", "after", "before", "limit")


def tool_schema(strict: bool = False) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the tool's arguments.

    ``strict=True``: the variant for strict function calling — every property
    required, the optional ones nullable (``null`` means "not given", which
    :func:`call_tool` accepts), no ``default`` keywords.
    """
    properties: dict[str, dict[str, Any]] = {
        "query": {
            "type": "string",
            "maxLength": QUERY_MAX_CHARS,
            "description": "Words to look for; any of them may match. Plain words, no operators.",
        },
        "speaker": {
            "type": "string",
            "enum": list(SPEAKERS),
            "default": "anyone",
            "description": "Whose messages: 'anyone', 'requester' (the person you are answering, "
                           "including their linked accounts) or 'you' (your own earlier messages).",
        },
        "after": {
            "type": "string",
            "format": "date-time",
            "description": "Only messages sent at or after this time (RFC 3339, with a time zone, "
                           "e.g. 2026-05-01T09:30:00Z).",
        },
        "before": {
            "type": "string",
            "format": "date-time",
            "description": "Only messages sent before this time (RFC 3339, with a time zone).",
        },
        "limit": {
            "type": "integer",
            "minimum": LIMIT_MIN,
            "maximum": LIMIT_MAX,
            "default": LIMIT_DEFAULT,
            "description": "How many hits at most (each comes with its context messages).",
        },
    }
    if not strict:
        return {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": False}
    # Strict mode makes every property required, so the model must send each
    # one: say first that null is the usual answer, or it invents a date range.
    not_given = {
        "speaker": "Usually null (anyone).",
        "after": "Usually null: set it only when the user asked about a specific time; never guess one.",
        "before": "Usually null: set it only when the user asked about a specific time; never guess one.",
        "limit": f"Usually null ({LIMIT_DEFAULT}).",
    }
    for name, note in not_given.items():
        prop = properties[name]
        prop.pop("default", None)
        prop["type"] = [prop["type"], "null"]
        if "enum" in prop:
            prop["enum"] = [*prop["enum"], None]
        prop["description"] = f"{note} {prop['description']}"
    return {"type": "object", "properties": properties, "required": list(_PROPERTIES),
            "additionalProperties": False}


def openai_tool(strict: bool = False) -> dict[str, Any]:
    """The tool in OpenAI's Chat Completions ``tools`` shape (``{"type": "function", "function": {…}}``)."""
    return {"type": "function",
            "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": tool_schema(strict),
                         "strict": strict}}


def openai_responses_tool(strict: bool = False) -> dict[str, Any]:
    """The tool in OpenAI's Responses API ``tools`` shape (``name`` and ``parameters`` at the top level)."""
    return {"type": "function", "name": TOOL_NAME, "description": TOOL_DESCRIPTION,
            "parameters": tool_schema(strict), "strict": strict}


def anthropic_tool(strict: bool = False) -> dict[str, Any]:
    """The tool in Anthropic's Messages API ``tools`` shape (``input_schema``)."""
    tool: dict[str, Any] = {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": tool_schema(strict)}
    if strict:
        tool["strict"] = True
    return tool


def mcp_tool(strict: bool = False) -> dict[str, Any]:
    """The tool as an MCP ``Tool`` (``tools/list`` wire shape): ``inputSchema`` (strict or not),
    ``outputSchema`` (:func:`output_schema`) and ``annotations`` (:data:`TOOL_ANNOTATIONS`)."""
    return {"name": TOOL_NAME, "title": TOOL_TITLE, "description": TOOL_DESCRIPTION,
            "inputSchema": tool_schema(strict), "outputSchema": output_schema(),
            "annotations": dict(TOOL_ANNOTATIONS)}


def output_schema() -> dict[str, Any]:
    """The JSON Schema of a successful result (:meth:`SearchResult.to_dict`), MCP ``outputSchema``.

    Objects allow more properties than listed: the result types may grow fields
    (the result types are public: fields and ``reasons`` keys may be added, never renamed).
    """
    role = {"type": "string", "enum": ["requester", "you", "other"]}
    message = {
        "message_id": {"type": "string"},
        "conversation_id": {"type": "string"},
        "sent_at": {"type": "string", "format": "date-time"},
        "speaker_id": {"type": "string"},
        "speaker_role": role,
        "body": {"type": "string"},
        "body_truncated": {"type": "boolean", "description": "the text was cut to the size limit"},
    }
    required = ["message_id", "conversation_id", "sent_at", "speaker_id", "speaker_role", "body"]
    neighbour = {"type": "object", "properties": message, "required": required}
    components = ("text", "coverage", "actor", "conversation", "participation", "recency", "total")
    reasons = {"type": "object",
               "properties": {**{c: {"type": "number"} for c in components},
                              "matched_terms": {"type": "array", "items": {"type": "string"}}},
               "required": [*components, "matched_terms"]}
    hit = {"type": "object",
           "properties": {**message, "score": {"type": "number"}, "reasons": reasons,
                          "before": {"type": "array", "items": neighbour,
                                     "description": "earlier messages of its conversation, nearest first"},
                          "after": {"type": "array", "items": neighbour,
                                    "description": "later messages of its conversation, nearest first"}},
           "required": [*required, "score", "reasons", "before", "after"]}
    return {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["ok", "search_budget_exhausted"]},
            "search_event_id": {"type": "string", "format": "uuid",
                                "description": "the audit record of this search"},
            "budget_used": {"type": "integer", "minimum": 0},
            "budget_remaining": {"type": "integer", "minimum": 0},
            "hits": {"type": "array", "items": hit, "description": "best first"},
        },
        "required": ["status", "search_event_id", "budget_used", "budget_remaining", "hits"],
    }


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


class ToolArgumentError(ValueError):
    """The model's arguments do not match :func:`tool_schema` (message says how)."""


_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
_NO_ZONE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?", re.ASCII)


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _check_text(name: str, value: str) -> None:
    if "\x00" in value:
        raise ToolArgumentError(f"{name} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolArgumentError(f"{name} is not valid Unicode text") from None


def _parse_time(name: str, value: Any) -> datetime:
    if not isinstance(value, str):
        raise ToolArgumentError(f"{name} must be an RFC 3339 date-time string, got {_type_name(value)}")
    if not _RFC3339.fullmatch(value):
        if _NO_ZONE.fullmatch(value):
            raise ToolArgumentError(
                f"{name} {_short(value)} has no time zone; give one, e.g. {value[:10]}T00:00:00Z")
        raise ToolArgumentError(
            f"{name} {_short(value)} is not an RFC 3339 date-time (e.g. 2026-05-01T09:30:00Z)")
    text = value.upper().replace(" ", "T").replace("Z", "+00:00")
    if "." in text:  # Python takes at most 6 fractional digits
        head, _, rest = text.partition(".")
        digits = re.match(r"[0-9]+", rest).group(0)  # type: ignore[union-attr]
        text = f"{head}.{digits[:6].ljust(6, '0')}{rest[len(digits):]}"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ToolArgumentError(f"{name} {_short(value)} is not a valid date-time ({exc})") from None
    return dt


def parse_arguments(raw_arguments: Any) -> dict[str, Any]:
    """The model's arguments as keyword arguments of :meth:`Search.search`.

    Raises :class:`ToolArgumentError` naming every problem found.
    """
    args = raw_arguments
    if isinstance(args, (bytes, bytearray)):
        try:
            args = args.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolArgumentError("arguments are not UTF-8 text") from None
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise ToolArgumentError(f"arguments are not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(args, Mapping):
        raise ToolArgumentError(f"arguments must be a JSON object, got {_type_name(args)}")

    problems: list[str] = []
    unknown = [k for k in args if k not in _PROPERTIES]
    if unknown:
        problems.append(
            "unknown argument" + ("s " if len(unknown) > 1 else " ")
            + ", ".join(_short(k, 40) for k in unknown[:5]) + ("…" if len(unknown) > 5 else "")
            + f"; the arguments are {', '.join(_PROPERTIES)}"
        )

    out: dict[str, Any] = {}

    def attempt(name: str, fn: Callable[[], Any]) -> None:
        try:
            value = fn()
        except ToolArgumentError as exc:
            problems.append(str(exc))
        else:
            if value is not None:
                out[name] = value

    def query() -> str:
        if "query" not in args:
            raise ToolArgumentError("query is required")
        value = args["query"]
        if not isinstance(value, str):
            raise ToolArgumentError(f"query must be a string, got {_type_name(value)}")
        _check_text("query", value)
        if len(value) > QUERY_MAX_CHARS:
            raise ToolArgumentError(f"query is {len(value)} characters long, over the maximum of {QUERY_MAX_CHARS}")
        return value

    def speaker() -> str | None:
        value = args.get("speaker")
        if value is None:
            return None
        if not isinstance(value, str) or value not in SPEAKERS:
            raise ToolArgumentError(
                f"speaker must be one of {', '.join(SPEAKERS)}, got {_short(value)}")
        return value

    def time(name: str) -> Callable[[], datetime | None]:
        def parse() -> datetime | None:
            value = args.get(name)
            return None if value is None else _parse_time(name, value)
        return parse

    def limit() -> int | None:
        value = args.get("limit")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolArgumentError(f"limit must be an integer, got {_type_name(value)}")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise ToolArgumentError(f"limit must be an integer, got {_short(value)}")
            value = int(value)
        if not LIMIT_MIN <= value <= LIMIT_MAX:
            raise ToolArgumentError(f"limit must be between {LIMIT_MIN} and {LIMIT_MAX}, got {value}")
        return value

    attempt("query", query)
    attempt("speaker", speaker)
    attempt("after", time("after"))
    attempt("before", time("before"))
    attempt("limit", limit)
    if problems:
        raise ToolArgumentError("; ".join(problems))
    return out


# --------------------------------------------------------------------------
# Calling
# --------------------------------------------------------------------------


class ToolCallError(Exception):
    """A tool call the model can correct: bad arguments, an ended run, a bad time window.

    ``message`` is safe to show the model (it never carries the run token);
    ``code`` is ``invalid_arguments`` or the server's ``HS00n``.
    """

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message = message
        self.code = code

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.message, "code": self.code}


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": message, "code": code}


def _server_error(exc: HistorySearchError, run: Any) -> ToolCallError:
    """The server's error as the model may see it: nothing model-visible carries the run token."""
    if isinstance(exc, UnknownRun):
        ended = "ended" in exc.message
        return ToolCallError("the run has ended: this turn can search no more" if ended
                             else "the run is unknown: this turn cannot search", exc.sqlstate or "HS002")
    message = exc.message
    if exc.hint:
        message += f" ({exc.hint})"
    token = str(run)
    if token:
        message = re.sub(re.escape(token), "the run", message, flags=re.IGNORECASE)
    return ToolCallError(message, exc.sqlstate or "HS")


def result_to_tool(result: SearchResult) -> dict[str, Any]:
    """A search result as the tool's JSON-able result."""
    return result.to_dict()


def run_tool(search: Search, raw_arguments: Any) -> dict[str, Any]:
    """Validate the model's raw arguments, search, and return the result as a JSON-able dict.

    Raises :class:`ToolCallError` for whatever the model got wrong (its message
    is meant for the model), :class:`~history_search.errors.DatabaseError` for
    infrastructure failures.
    """
    try:
        kwargs = parse_arguments(raw_arguments)
    except ToolArgumentError as exc:
        raise ToolCallError(str(exc), "invalid_arguments") from None
    try:
        result = search.search(**kwargs)
    except DatabaseError:
        raise
    except HistorySearchError as exc:
        raise _server_error(exc, search.run) from None
    return result_to_tool(result)


async def arun_tool(search: AsyncSearch, raw_arguments: Any) -> dict[str, Any]:
    """:func:`run_tool` for an :class:`AsyncSearch`."""
    try:
        kwargs = parse_arguments(raw_arguments)
    except ToolArgumentError as exc:
        raise ToolCallError(str(exc), "invalid_arguments") from None
    try:
        result = await search.search(**kwargs)
    except DatabaseError:
        raise
    except HistorySearchError as exc:
        raise _server_error(exc, search.run) from None
    return result_to_tool(result)


def call_tool(search: Search, raw_arguments: Any) -> dict[str, Any]:
    """Validate the model's raw arguments, search, and return a JSON-able dict.

    Success: the :class:`SearchResult` as a dict (``status``, ``search_event_id``,
    ``budget_used``, ``budget_remaining``, ``hits``). Failure the model caused:
    ``{"error": message, "code": "invalid_arguments" | "HS00n"}``.
    """
    try:
        return run_tool(search, raw_arguments)
    except ToolCallError as exc:
        return exc.to_dict()


async def acall_tool(search: AsyncSearch, raw_arguments: Any) -> dict[str, Any]:
    """:func:`call_tool` for an :class:`AsyncSearch`."""
    try:
        return await arun_tool(search, raw_arguments)
    except ToolCallError as exc:
        return exc.to_dict()
