"""The history-search client: thin wrappers over the SQL surface (docs/sql-reference.md).

Three kinds of caller, three classes (each with an ``Async…`` twin over
:class:`psycopg.AsyncConnection` / :class:`psycopg_pool.AsyncConnectionPool`):

:class:`Runtime`
    the trusted agent runtime: ingestion (accounts, conversations, memberships,
    messages, identity links), runs (``begin_run``/``end_run``) and delivery
    (``check_delivery``/``record_reply``). Typically a ``history_runtime`` login.
:class:`Search`
    the model side, bound to one run token; its only call is :meth:`Search.search`.
    A ``history_searcher`` login is enough.
:class:`Auditor`
    the audit views (a ``history_auditor`` login) and ``verify_query_digest``
    (which needs ``history_digest_verifier``, granted to a person explicitly).

None of them decides anything: eligibility, ranking, neighbours, budget and
audit all happen inside ``history.search_history`` (a procedure that commits
its audit before it returns the hits). The
client only checks that a value *can be sent* (a timezone-aware datetime, text
without NUL characters, an ``int`` that fits ``integer``) and maps rows to
dataclasses by name (:mod:`history_search.models`). Driver errors become the
typed errors of :mod:`history_search.errors`.

Connections and transactions
----------------------------
Each class takes either a connection or a pool:

* **a connection** (``psycopg.Connection``/``AsyncConnection``): calls run on it
  and the client **never commits or rolls back** — the caller owns the
  transaction. With ``autocommit=True`` every call is its own transaction
  (the usual choice for :class:`Search`: a failed search then leaves the
  connection usable). Without autocommit, psycopg opens a transaction on the
  first call; the caller commits (``with conn.transaction(): …`` groups several
  calls, e.g. a whole import) — nothing is visible to others, and no search's
  audit row exists, until then. After an error in such a transaction the
  caller must roll back before the connection can be used again.
  **Searches are the exception**: ``history.search_history`` commits the
  search's audit row, evidence and budget charge before it returns any hit
  (audit before reveal), so it cannot run inside a transaction. :meth:`Search.search`
  needs a connection with no open transaction; if it is not in autocommit, the
  client switches it to autocommit for the call and back. A connection inside
  a transaction raises :class:`~history_search.errors.SearchInTransaction`
  before anything is sent.
* **a pool** (``psycopg_pool.ConnectionPool``/``AsyncConnectionPool``): each call
  takes a connection for itself and, as the pool's ``connection()`` block does,
  commits on success and rolls back on error.

Concurrent searches of one run may fail with a serialization failure under
REPEATABLE READ or SERIALIZABLE (``DatabaseError`` with ``retryable`` true):
retry the call.

All SQL text is in :data:`QUERIES`; parameters are ``%(name)s`` only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import (Any, AsyncContextManager, AsyncIterator, Iterator, Callable, ContextManager, Generic, Iterable,
                    Literal, Sequence, TypeVar, Union, overload)

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg.types.composite import CompositeInfo, register_composite

from .errors import DatabaseError, InvalidArgument, SearchInTransaction, wrap_errors
from .models import DeliveryProblem, SearchResult

try:  # psycopg_pool is a dependency, but the client works without it
    from psycopg_pool import AsyncConnectionPool, ConnectionPool
except ImportError:  # pragma: no cover
    ConnectionPool = AsyncConnectionPool = None  # type: ignore[assignment,misc]

__all__ = [
    "QUERIES",
    "AsyncAuditor",
    "AsyncRuntime",
    "AsyncSearch",
    "Auditor",
    "Runtime",
    "Search",
]

# --------------------------------------------------------------------------
# The SQL, in one place. Named arguments (p_x => …) so that a parameter order
# change or a new defaulted parameter on the server side cannot shift values;
# explicit casts so that overload resolution never depends on Python types.
# --------------------------------------------------------------------------

QUERIES: dict[str, str] = {
    # -- runtime: ingestion --
    # Create an account or update its display name.
    "upsert_account": """
        SELECT history.upsert_account(
            p_account_id => %(account_id)s::text, p_kind => %(kind)s::text,
            p_display_name => %(display_name)s::text,
            p_tenant => %(tenant)s::text)""",
    # Create a conversation (in a language: a text search configuration) or update its title.
    "upsert_conversation": """
        SELECT history.upsert_conversation(
            p_conversation_id => %(conversation_id)s::text, p_kind => %(kind)s::text,
            p_title => %(title)s::text, p_language => %(language)s::regconfig,
            p_tenant => %(tenant)s::text)""",
    # Open a membership [since, …).
    "add_member": """
        SELECT history.add_member(
            p_conversation_id => %(conversation_id)s::text, p_account_id => %(account_id)s::text,
            p_since => %(since)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # Close the open membership at until.
    "remove_member": """
        SELECT history.remove_member(
            p_conversation_id => %(conversation_id)s::text, p_account_id => %(account_id)s::text,
            p_until => %(until)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # Post a message (idempotent for an identical re-post), with its lineage sources.
    "post_message": """
        SELECT history.post_message(
            p_message_id => %(message_id)s::text, p_conversation_id => %(conversation_id)s::text,
            p_author_id => %(author_id)s::text, p_body => %(body)s::text,
            p_sent_at => %(sent_at)s::timestamptz, p_sources => %(sources)s::text[],
            p_tenant => %(tenant)s::text)""",
    # Append an edit event.
    "edit_message": """
        SELECT history.edit_message(
            p_message_id => %(message_id)s::text, p_body => %(body)s::text, p_at => %(at)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # Append a deletion event.
    "delete_message": """
        SELECT history.delete_message(p_message_id => %(message_id)s::text, p_at => %(at)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # Erase every text an account wrote; its messages stay as deleted placeholders.
    "erase_account": """
        SELECT history.erase_account(p_account_id => %(account_id)s::text, p_at => %(at)s::timestamptz,
            p_tenant => %(tenant)s::text) AS erased""",
    # Record a verified proof that two accounts are one person.
    "link_identity": """
        SELECT history.link_identity(
            p_proof_id => %(proof_id)s::text, p_account_a => %(account_a)s::text,
            p_account_b => %(account_b)s::text, p_verified_at => %(verified_at)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # Revoke a proof.
    "revoke_proof": """
        SELECT history.revoke_proof(p_proof_id => %(proof_id)s::text, p_at => %(at)s::timestamptz,
            p_tenant => %(tenant)s::text)""",
    # -- runtime: runs and delivery --
    # Start one agent turn; returns the run token.
    "begin_run": """
        SELECT history.begin_run(
            p_agent_id => %(agent_id)s::text, p_conversation_id => %(conversation_id)s::text,
            p_requester_id => %(requester_id)s::text, p_current_message_id => %(current_message_id)s::text,
            p_loaded_message_ids => %(loaded_message_ids)s::text[], p_audience => %(audience)s::text[],
            p_tenant => %(tenant)s::text) AS run""",
    # End a run without a reply.
    "end_run": """
        SELECT history.end_run(p_run => %(run)s::uuid)""",
    "run_status": """
        SELECT history.run_status(p_run => %(run)s::uuid) AS status""",
    # The run's evidence that would no longer pass, with the reason.
    "check_delivery": """
        SELECT d.message_id, d.reason FROM history.check_delivery(p_run => %(run)s::uuid) AS d""",
    # Final delivery check, then post the reply with the evidence as lineage and end the run.
    "record_reply": """
        SELECT history.record_reply(
            p_run => %(run)s::uuid, p_message_id => %(message_id)s::text, p_body => %(body)s::text,
            p_sent_at => %(sent_at)s::timestamptz)""",
    # -- model side: search --
    # One search. A committing procedure (audit before reveal): it runs only at
    # the top level, so the client calls it in autocommit. Its INOUT result is
    # the composite history.search_result, loaded by field name (see
    # _register_result_types).
    "search_history": """
        CALL history.search_history(
                 p_run => %(run)s::uuid, p_query => %(query)s::text, p_speaker => %(speaker)s::text,
                 p_after => %(after)s::timestamptz, p_before => %(before)s::timestamptz,
                 p_limit => %(limit)s::integer, result => NULL)""",
    # -- auditor: the audit trail --
    # Recent search events, newest first, optionally filtered.
    "search_events": """
        SELECT a.*
          FROM history.search_audit AS a
         WHERE (%(run)s::uuid IS NULL OR a.run_token_sha256 = pg_catalog.encode(pg_catalog.sha256(
                    pg_catalog.convert_to(%(run)s::uuid::text, 'UTF8')), 'hex'))
           AND (%(agent_id)s::text IS NULL OR a.agent_id = %(agent_id)s::text)
           AND (%(event)s::uuid IS NULL OR a.search_event_id = %(event)s::uuid)
           AND (%(since)s::timestamptz IS NULL OR a.searched_at >= %(since)s::timestamptz)
           AND (%(until)s::timestamptz IS NULL OR a.searched_at < %(until)s::timestamptz)
         ORDER BY a.searched_at DESC, a.search_event_id
         LIMIT %(limit)s::integer""",
    # The messages one search returned (hits and neighbours), in order.
    "search_event_messages": """
        SELECT m.*
          FROM history.search_audit_messages AS m
         WHERE m.search_event_id = %(event)s::uuid
         ORDER BY m.position""",
    # Did this query text produce this event? (keyed digest; the text is stored nowhere)
    "verify_query_digest": """
        SELECT history.verify_query_digest(p_event_id => %(event)s::uuid, p_query => %(query)s::text) AS matches""",
}

# --------------------------------------------------------------------------
# What may be sent
# --------------------------------------------------------------------------

_INT4 = (-(2**31), 2**31 - 1)


def _check_value(name: str, value: Any) -> Any:
    """Reject what cannot be sent faithfully; return the value to send."""
    if value is None:
        return None
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidArgument(f"{name} contains a NUL character, which PostgreSQL text cannot hold")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgument(f"{name} is not valid Unicode text (lone surrogate)") from None
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidArgument(
                f"{name} is a naive datetime ({value.isoformat()}); pass a timezone-aware one"
            )
        return value
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not _INT4[0] <= value <= _INT4[1]:
            raise InvalidArgument(f"{name} {value} does not fit a PostgreSQL integer")
        return value
    if isinstance(value, (list, tuple)):
        return [_check_value(f"{name}[{i}]", v) for i, v in enumerate(value)]
    return value


def _text(name: str, value: Any, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if value is not None and not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a str, got {type(value).__name__}")
    return value


def _time(name: str, value: Any, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if value is not None and not isinstance(value, datetime):
        raise InvalidArgument(f"{name} must be a timezone-aware datetime, got {type(value).__name__}")
    return value


def _texts(name: str, values: Iterable[str] | None, *, optional: bool = False) -> list[str] | None:
    if values is None:
        if optional:
            return None
        return []
    if isinstance(values, (str, bytes)):
        raise InvalidArgument(f"{name} must be a sequence of ids, not a single {type(values).__name__}")
    out = list(values)
    for i, v in enumerate(out):
        _text(f"{name}[{i}]", v)
    return out


def _run_token(run: Any) -> uuid.UUID:
    if isinstance(run, uuid.UUID):
        return run
    if isinstance(run, str):
        try:
            return uuid.UUID(run)
        except ValueError:
            raise InvalidArgument(f"run token {run[:64]!r} is not a uuid") from None
    raise InvalidArgument(f"run token must be a uuid.UUID or str, got {type(run).__name__}")


# --------------------------------------------------------------------------
# One operation: SQL name, parameters, and how to read the answer
# --------------------------------------------------------------------------


T = TypeVar("T")


def _nothing(rows: Any) -> None:
    return None


@dataclass(frozen=True)
class _Op(Generic[T]):
    """One call: the QUERIES entry, its parameters, and how to read the answer.

    ``decode`` gets the row (``fetch='one'``), the rows (``'all'``) or None (``'none'``).
    """

    name: str
    params: dict[str, Any]
    fetch: Literal["none", "one", "all"]
    decode: Callable[[Any], T]
    #: the SQL commits by itself (the search procedure): run it in autocommit
    commits: bool = False


@overload
def _op(name: str, fetch: Literal["none"] = "none", **params: Any) -> _Op[None]: ...
@overload
def _op(name: str, fetch: Literal["one", "all"], decode: Callable[[Any], T], commits: bool = False,
        **params: Any) -> _Op[T]: ...
def _op(name: str, fetch: Literal["none", "one", "all"] = "none",
        decode: Callable[[Any], Any] = _nothing, commits: bool = False, **params: Any) -> _Op[Any]:
    return _Op(name, {k: _check_value(k, v) for k, v in params.items()}, fetch, decode, commits)


# The composite types a search returns, inner first (search_result holds
# search_hit[]); each is loaded as a dict of its fields, so the models map it
# by name and a field added on the server is simply ignored.
_RESULT_TYPES = ("history.search_hit", "history.search_result")


def _register_info(conn: Any, info: CompositeInfo | None, name: str) -> None:
    if info is None:
        raise DatabaseError(f"type {name} not found: is the database migrated?")
    fields = tuple(info.field_names)
    register_composite(info, conn, factory=lambda *values: dict(zip(fields, values)))


def _register_result_types(conn: "psycopg.Connection[Any]") -> None:
    for name in _RESULT_TYPES:
        if conn.adapters.types.get(name) is None:
            _register_info(conn, CompositeInfo.fetch(conn, name), name)


async def _aregister_result_types(conn: "psycopg.AsyncConnection[Any]") -> None:
    for name in _RESULT_TYPES:
        if conn.adapters.types.get(name) is None:
            _register_info(conn, await CompositeInfo.fetch(conn, name), name)


def _require_no_transaction(conn: Any) -> None:
    if conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
        raise SearchInTransaction(
            "search_history commits its audit before it returns hits, so it cannot run inside "
            "a transaction: use an autocommit connection, or call it outside conn.transaction()")


@contextlib.contextmanager
def _autocommit(conn: "psycopg.Connection[Any]") -> Iterator[None]:
    """``conn`` in autocommit for one call (it has no open transaction), then as it was."""
    _require_no_transaction(conn)
    if conn.autocommit or conn.closed:  # a closed one fails in execute, with the driver's error
        yield
        return
    conn.autocommit = True
    try:
        yield
    finally:
        conn.autocommit = False


@contextlib.asynccontextmanager
async def _aautocommit(conn: "psycopg.AsyncConnection[Any]") -> AsyncIterator[None]:
    _require_no_transaction(conn)
    if conn.autocommit or conn.closed:
        yield
        return
    await conn.set_autocommit(True)
    try:
        yield
    finally:
        await conn.set_autocommit(False)


def _decode_search(row: dict[str, Any]) -> SearchResult:
    return SearchResult.from_dict(row["result"])


def _decode_run(row: dict[str, Any]) -> uuid.UUID:
    run = row["run"]
    return run if isinstance(run, uuid.UUID) else uuid.UUID(str(run))


def _decode_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(rows)


def _decode_erased(row: dict[str, Any]) -> int:
    return int(row["erased"])


def _decode_matches(row: dict[str, Any]) -> bool:
    return bool(row["matches"])


def _decode_status(row: dict[str, Any]) -> str:
    return str(row["status"])


def _decode_problems(rows: list[dict[str, Any]]) -> list[DeliveryProblem]:
    return [DeliveryProblem.from_dict(r) for r in rows]


def _search_op(run: uuid.UUID, query: Any, speaker: Any, after: Any, before: Any, limit: Any) -> _Op[SearchResult]:
    _text("query", query)
    _text("speaker", speaker, optional=True)
    _time("after", after, optional=True)
    _time("before", before, optional=True)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise InvalidArgument(f"limit must be an int, got {type(limit).__name__}")
    return _op("search_history", "one", _decode_search, commits=True, run=run, query=query, speaker=speaker,
               after=after, before=before, limit=limit)


# The operations that name accounts, conversations, messages or proofs by id:
# a Runtime sends its tenant with each (a run carries its tenant, so the calls
# taking a run token need none).
_TENANT_OPS = frozenset({
    "upsert_account", "upsert_conversation", "add_member", "remove_member", "post_message", "edit_message",
    "delete_message", "erase_account", "link_identity", "revoke_proof", "begin_run",
})


def _in_tenant(op: _Op[T], tenant: str) -> _Op[T]:
    if op.name not in _TENANT_OPS:
        return op
    return dataclasses.replace(op, params={**op.params, "tenant": tenant})


class _Ops:
    """Builders of every operation, shared by the sync and async classes."""

    @staticmethod
    def upsert_account(account_id: Any, kind: Any, display_name: Any) -> _Op[None]:
        return _op("upsert_account", account_id=_text("account_id", account_id), kind=_text("kind", kind),
                   display_name=_text("display_name", display_name, optional=True))

    @staticmethod
    def upsert_conversation(conversation_id: Any, kind: Any, title: Any, language: Any = None) -> _Op[None]:
        return _op("upsert_conversation", conversation_id=_text("conversation_id", conversation_id),
                   kind=_text("kind", kind), title=_text("title", title, optional=True),
                   language=_text("language", language, optional=True))

    @staticmethod
    def add_member(conversation_id: Any, account_id: Any, since: Any) -> _Op[None]:
        return _op("add_member", conversation_id=_text("conversation_id", conversation_id),
                   account_id=_text("account_id", account_id), since=_time("since", since))

    @staticmethod
    def remove_member(conversation_id: Any, account_id: Any, until: Any) -> _Op[None]:
        return _op("remove_member", conversation_id=_text("conversation_id", conversation_id),
                   account_id=_text("account_id", account_id), until=_time("until", until))

    @staticmethod
    def post_message(message_id: Any, conversation_id: Any, author_id: Any, body: Any, sent_at: Any,
                     sources: Any) -> _Op[None]:
        return _op("post_message", message_id=_text("message_id", message_id),
                   conversation_id=_text("conversation_id", conversation_id),
                   author_id=_text("author_id", author_id), body=_text("body", body),
                   sent_at=_time("sent_at", sent_at), sources=_texts("sources", sources))

    @staticmethod
    def edit_message(message_id: Any, body: Any, at: Any) -> _Op[None]:
        return _op("edit_message", message_id=_text("message_id", message_id), body=_text("body", body),
                   at=_time("at", at))

    @staticmethod
    def delete_message(message_id: Any, at: Any) -> _Op[None]:
        return _op("delete_message", message_id=_text("message_id", message_id), at=_time("at", at))

    @staticmethod
    def erase_account(account_id: Any, at: Any) -> _Op[int]:
        return _op("erase_account", "one", _decode_erased, account_id=_text("account_id", account_id),
                   at=_time("at", at))

    @staticmethod
    def link_identity(proof_id: Any, account_a: Any, account_b: Any, verified_at: Any) -> _Op[None]:
        return _op("link_identity", proof_id=_text("proof_id", proof_id),
                   account_a=_text("account_a", account_a), account_b=_text("account_b", account_b),
                   verified_at=_time("verified_at", verified_at))

    @staticmethod
    def revoke_proof(proof_id: Any, at: Any) -> _Op[None]:
        return _op("revoke_proof", proof_id=_text("proof_id", proof_id), at=_time("at", at))

    @staticmethod
    def begin_run(agent_id: Any, conversation_id: Any, requester_id: Any, current_message_id: Any,
                  loaded_message_ids: Any, audience: Any) -> _Op[uuid.UUID]:
        return _op("begin_run", "one", _decode_run,
                   agent_id=_text("agent_id", agent_id),
                   conversation_id=_text("conversation_id", conversation_id),
                   requester_id=_text("requester_id", requester_id),
                   current_message_id=_text("current_message_id", current_message_id),
                   loaded_message_ids=_texts("loaded_message_ids", loaded_message_ids),
                   audience=_texts("audience", audience, optional=True))

    @staticmethod
    def end_run(run: Any) -> _Op[None]:
        return _op("end_run", run=_run_token(run))

    @staticmethod
    def run_status(run: Any) -> _Op[str]:
        return _op("run_status", "one", _decode_status, run=_run_token(run))

    @staticmethod
    def check_delivery(run: Any) -> _Op[list[DeliveryProblem]]:
        return _op("check_delivery", "all", _decode_problems, run=_run_token(run))

    @staticmethod
    def record_reply(run: Any, message_id: Any, body: Any, sent_at: Any) -> _Op[None]:
        return _op("record_reply", run=_run_token(run), message_id=_text("message_id", message_id),
                   body=_text("body", body), sent_at=_time("sent_at", sent_at))

    @staticmethod
    def search_events(run: Any, agent_id: Any, event: Any, since: Any, until: Any,
                      limit: Any) -> _Op[list[dict[str, Any]]]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidArgument(f"limit must be a non-negative int, got {limit!r}")
        return _op("search_events", "all", _decode_rows,
                   run=None if run is None else _run_token(run),
                   agent_id=_text("agent_id", agent_id, optional=True),
                   event=None if event is None else _event_id(event),
                   since=_time("since", since, optional=True), until=_time("until", until, optional=True),
                   limit=limit)

    @staticmethod
    def search_event_messages(event: Any) -> _Op[list[dict[str, Any]]]:
        return _op("search_event_messages", "all", _decode_rows, event=_event_id(event))

    @staticmethod
    def verify_query_digest(event: Any, query: Any) -> _Op[bool]:
        return _op("verify_query_digest", "one", _decode_matches,
                   event=_event_id(event), query=_text("query", query))


def _event_id(event: Any) -> uuid.UUID:
    try:
        return _run_token(event)
    except InvalidArgument:
        raise InvalidArgument(f"search event id {event!r:.80} is not a uuid") from None


# --------------------------------------------------------------------------
# Running an operation on a connection or a pool
# --------------------------------------------------------------------------

SyncSource = Union[psycopg.Connection, "ConnectionPool"]
AsyncSource = Union[psycopg.AsyncConnection, "AsyncConnectionPool"]


def _is_sync_pool(source: Any) -> bool:
    return ConnectionPool is not None and isinstance(source, ConnectionPool)


def _is_async_pool(source: Any) -> bool:
    return AsyncConnectionPool is not None and isinstance(source, AsyncConnectionPool)


class _SyncBase:
    def __init__(self, source: SyncSource):
        if not (isinstance(source, psycopg.Connection) or _is_sync_pool(source)):
            raise TypeError(
                f"{type(self).__name__} needs a psycopg.Connection or psycopg_pool.ConnectionPool, "
                f"got {type(source).__name__}"
            )
        self._source = source

    def _connection(self) -> ContextManager[psycopg.Connection[Any]]:
        if isinstance(self._source, psycopg.Connection):
            return contextlib.nullcontext(self._source)
        return self._source.connection()

    def _call(self, op: _Op[T]) -> T:
        with wrap_errors():  # outermost: a pool's commit on exit is translated too
            with self._connection() as conn, (_autocommit(conn) if op.commits else contextlib.nullcontext()):
                if op.commits:
                    _register_result_types(conn)
                with conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(QUERIES[op.name], op.params)
                    if op.fetch == "one":
                        return op.decode(cur.fetchone())
                    if op.fetch == "all":
                        return op.decode(cur.fetchall())
                    return op.decode(None)


class _AsyncBase:
    def __init__(self, source: AsyncSource):
        if not (isinstance(source, psycopg.AsyncConnection) or _is_async_pool(source)):
            raise TypeError(
                f"{type(self).__name__} needs a psycopg.AsyncConnection or psycopg_pool.AsyncConnectionPool, "
                f"got {type(source).__name__}"
            )
        self._source = source

    def _connection(self) -> AsyncContextManager[psycopg.AsyncConnection[Any]]:
        if isinstance(self._source, psycopg.AsyncConnection):
            return contextlib.nullcontext(self._source)
        return self._source.connection()

    async def _call(self, op: _Op[T]) -> T:
        with wrap_errors():
            async with self._connection() as conn, (_aautocommit(conn) if op.commits else contextlib.nullcontext()):
                if op.commits:
                    await _aregister_result_types(conn)
                async with conn.cursor(row_factory=dict_row) as cur:
                    await cur.execute(QUERIES[op.name], op.params)
                    if op.fetch == "one":
                        return op.decode(await cur.fetchone())
                    if op.fetch == "all":
                        return op.decode(await cur.fetchall())
                    return op.decode(None)


# --------------------------------------------------------------------------
# Runtime
# --------------------------------------------------------------------------

_RuntimeDoc = """The trusted runtime's calls (ingestion, runs, delivery), one method per SQL function.

    Times are timezone-aware datetimes. Every method returns None unless said
    otherwise. Unknown ids raise :class:`~history_search.errors.NotFound`,
    conflicting writes :class:`~history_search.errors.Conflict`, bad arguments
    :class:`~history_search.errors.InvalidArgument`.

    A runtime works in one tenant, ``tenant`` (``'default'`` unless given):
    every id it names is that tenant's, and a tenant is created by the first
    ``upsert_account`` or ``upsert_conversation`` naming it (any other call in
    a tenant nothing created raises ``NotFound``). Serve several tenants with
    one runtime object per tenant; they may share a connection or a pool. A
    run carries its tenant, so the calls taking a run token need none.
    """


class Runtime(_SyncBase):
    __doc__ = _RuntimeDoc

    def __init__(self, source: SyncSource, *, tenant: str = "default"):
        super().__init__(source)
        self._tenant: str = _check_value("tenant", _text("tenant", tenant))

    @property
    def tenant(self) -> str:
        """The tenant every id this runtime names belongs to."""
        return self._tenant

    def _call(self, op: _Op[T]) -> T:
        return super()._call(_in_tenant(op, self._tenant))

    def upsert_account(self, account_id: str, kind: str, display_name: str | None = None) -> None:
        """Create an account (``kind`` 'person' or 'agent') or update its display name."""
        self._call(_Ops.upsert_account(account_id, kind, display_name))

    def upsert_conversation(self, conversation_id: str, kind: str, title: str | None = None,
                            language: str | None = None) -> None:
        """Create a conversation (``kind`` 'direct', 'group' or 'channel') or update its title.

        ``language`` is the text search configuration its messages are analysed
        with (``'german'``, ``'russian'``, ``'simple'`` for a language PostgreSQL
        has no dictionary for, ...); None means the database's default
        (``search_settings.text_search_config``). It is fixed at creation: a
        different one for an existing conversation is :class:`Conflict`.
        """
        self._call(_Ops.upsert_conversation(conversation_id, kind, title, language))

    def add_member(self, conversation_id: str, account_id: str, since: datetime) -> None:
        """Open a membership of the conversation from ``since``."""
        self._call(_Ops.add_member(conversation_id, account_id, since))

    def remove_member(self, conversation_id: str, account_id: str, until: datetime) -> None:
        """Close the account's open membership at ``until``."""
        self._call(_Ops.remove_member(conversation_id, account_id, until))

    def post_message(self, message_id: str, conversation_id: str, author_id: str, body: str,
                     sent_at: datetime, sources: Sequence[str] = ()) -> None:
        """Post a message; ``sources`` are the message ids it was derived from (its lineage)."""
        self._call(_Ops.post_message(message_id, conversation_id, author_id, body, sent_at, sources))

    def edit_message(self, message_id: str, body: str, at: datetime) -> None:
        self._call(_Ops.edit_message(message_id, body, at))

    def delete_message(self, message_id: str, at: datetime) -> None:
        self._call(_Ops.delete_message(message_id, at))

    def erase_account(self, account_id: str, at: datetime) -> int:
        """Erase every text the account wrote (bodies, search documents, display name).

        Its messages stay as deleted placeholders (ids, order and lineage hold).
        Idempotent; returns how many messages lost text in this call.
        """
        return self._call(_Ops.erase_account(account_id, at))

    def link_identity(self, proof_id: str, account_a: str, account_b: str, verified_at: datetime) -> None:
        """Record a verified proof that two accounts belong to one person."""
        self._call(_Ops.link_identity(proof_id, account_a, account_b, verified_at))

    def revoke_proof(self, proof_id: str, at: datetime) -> None:
        self._call(_Ops.revoke_proof(proof_id, at))

    def begin_run(self, agent_id: str, conversation_id: str, requester_id: str, current_message_id: str,
                  loaded_message_ids: Sequence[str] = (), audience: Sequence[str] | None = None) -> uuid.UUID:
        """Start one agent turn; returns the run token to bind a :class:`Search` to.

        ``audience`` None means the destination's open members (the agent excepted).
        """
        return self._call(_Ops.begin_run(agent_id, conversation_id, requester_id, current_message_id,
                                         loaded_message_ids, audience))

    def end_run(self, run: uuid.UUID | str) -> None:
        """End a run without a reply (its token stops working)."""
        self._call(_Ops.end_run(run))

    def check_delivery(self, run: uuid.UUID | str) -> list[DeliveryProblem]:
        """The run's evidence that no longer passes; empty means a reply may be delivered."""
        return self._call(_Ops.check_delivery(run))

    def record_reply(self, run: uuid.UUID | str, message_id: str, body: str, sent_at: datetime) -> None:
        """Check delivery, post the agent's reply with the evidence as lineage, end the run.

        Raises :class:`~history_search.errors.DeliveryBlocked` (nothing posted, the run stays open).
        """
        self._call(_Ops.record_reply(run, message_id, body, sent_at))

    def search_for(self, run: uuid.UUID | str) -> "Search":
        """A :class:`Search` bound to ``run`` over the same connection or pool."""
        return Search(self._source, run)


class AsyncRuntime(_AsyncBase):
    __doc__ = _RuntimeDoc

    def __init__(self, source: AsyncSource, *, tenant: str = "default"):
        super().__init__(source)
        self._tenant: str = _check_value("tenant", _text("tenant", tenant))

    @property
    def tenant(self) -> str:
        """The tenant every id this runtime names belongs to."""
        return self._tenant

    async def _call(self, op: _Op[T]) -> T:
        return await super()._call(_in_tenant(op, self._tenant))

    async def upsert_account(self, account_id: str, kind: str, display_name: str | None = None) -> None:
        await self._call(_Ops.upsert_account(account_id, kind, display_name))

    async def upsert_conversation(self, conversation_id: str, kind: str, title: str | None = None,
                                  language: str | None = None) -> None:
        await self._call(_Ops.upsert_conversation(conversation_id, kind, title, language))

    async def add_member(self, conversation_id: str, account_id: str, since: datetime) -> None:
        await self._call(_Ops.add_member(conversation_id, account_id, since))

    async def remove_member(self, conversation_id: str, account_id: str, until: datetime) -> None:
        await self._call(_Ops.remove_member(conversation_id, account_id, until))

    async def post_message(self, message_id: str, conversation_id: str, author_id: str, body: str,
                           sent_at: datetime, sources: Sequence[str] = ()) -> None:
        await self._call(_Ops.post_message(message_id, conversation_id, author_id, body, sent_at, sources))

    async def edit_message(self, message_id: str, body: str, at: datetime) -> None:
        await self._call(_Ops.edit_message(message_id, body, at))

    async def delete_message(self, message_id: str, at: datetime) -> None:
        await self._call(_Ops.delete_message(message_id, at))

    async def erase_account(self, account_id: str, at: datetime) -> int:
        return await self._call(_Ops.erase_account(account_id, at))

    async def link_identity(self, proof_id: str, account_a: str, account_b: str, verified_at: datetime) -> None:
        await self._call(_Ops.link_identity(proof_id, account_a, account_b, verified_at))

    async def revoke_proof(self, proof_id: str, at: datetime) -> None:
        await self._call(_Ops.revoke_proof(proof_id, at))

    async def begin_run(self, agent_id: str, conversation_id: str, requester_id: str, current_message_id: str,
                        loaded_message_ids: Sequence[str] = (),
                        audience: Sequence[str] | None = None) -> uuid.UUID:
        return await self._call(_Ops.begin_run(agent_id, conversation_id, requester_id, current_message_id,
                                               loaded_message_ids, audience))

    async def end_run(self, run: uuid.UUID | str) -> None:
        await self._call(_Ops.end_run(run))

    async def check_delivery(self, run: uuid.UUID | str) -> list[DeliveryProblem]:
        return await self._call(_Ops.check_delivery(run))

    async def record_reply(self, run: uuid.UUID | str, message_id: str, body: str, sent_at: datetime) -> None:
        await self._call(_Ops.record_reply(run, message_id, body, sent_at))

    def search_for(self, run: uuid.UUID | str) -> "AsyncSearch":
        return AsyncSearch(self._source, run)


# --------------------------------------------------------------------------
# Search (the model side)
# --------------------------------------------------------------------------

_SearchDoc = """The model-side search, bound to one run token.

    The run (agent, destination, requester, audience, what is already in the
    prompt) was fixed by the runtime in ``begin_run``; the model supplies only
    the arguments of :meth:`search`. ``speaker`` is 'anyone', 'requester' or
    'you'; ``after`` is inclusive, ``before`` exclusive; ``limit`` defaults to 8
    and the server caps it at 20.
    """


class Search(_SyncBase):
    __doc__ = _SearchDoc

    def __init__(self, source: SyncSource, run: uuid.UUID | str):
        super().__init__(source)
        self._run = _run_token(run)

    @property
    def run(self) -> uuid.UUID:
        return self._run

    def search(self, query: str, speaker: str | None = "anyone", after: datetime | None = None,
               before: datetime | None = None, limit: int | None = 8) -> SearchResult:
        return self._call(_search_op(self._run, query, speaker, after, before, limit))

    def status(self) -> str:
        """``'open'`` or ``'ended'`` (:class:`UnknownRun` for a token no run has): no search, no audit."""
        return self._call(_Ops.run_status(self._run))

    def __repr__(self) -> str:
        return f"Search(run={self._run})"


class AsyncSearch(_AsyncBase):
    __doc__ = _SearchDoc

    def __init__(self, source: AsyncSource, run: uuid.UUID | str):
        super().__init__(source)
        self._run = _run_token(run)

    @property
    def run(self) -> uuid.UUID:
        return self._run

    async def search(self, query: str, speaker: str | None = "anyone", after: datetime | None = None,
                     before: datetime | None = None, limit: int | None = 8) -> SearchResult:
        return await self._call(_search_op(self._run, query, speaker, after, before, limit))

    async def status(self) -> str:
        """``'open'`` or ``'ended'`` (:class:`UnknownRun` for a token no run has): no search, no audit."""
        return await self._call(_Ops.run_status(self._run))

    def __repr__(self) -> str:
        return f"AsyncSearch(run={self._run})"


# --------------------------------------------------------------------------
# Auditor
# --------------------------------------------------------------------------

_AuditorDoc = """Reads of the audit views (``history.search_audit``, ``history.search_audit_messages``;
    a ``history_auditor`` login) and ``history.verify_query_digest`` (a login that
    also holds ``history_digest_verifier``). Rows are dicts with the views' columns
    (so new columns appear without a client change); no message or query text and
    no run token: a run shows as ``run_key`` and ``run_token_sha256``, and
    ``search_events(run=token)`` matches the token by that digest.
    """


class Auditor(_SyncBase):
    __doc__ = _AuditorDoc

    def search_events(self, *, run: uuid.UUID | str | None = None, agent_id: str | None = None,
                      event: uuid.UUID | str | None = None, since: datetime | None = None,
                      until: datetime | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Search events (one row per ``search_history`` call), newest first."""
        return self._call(_Ops.search_events(run, agent_id, event, since, until, limit))

    def search_event_messages(self, event: uuid.UUID | str) -> list[dict[str, Any]]:
        """The messages one search returned (hits and neighbours) with the hits' ranking components."""
        return self._call(_Ops.search_event_messages(event))

    def verify_query_digest(self, event: uuid.UUID | str, query: str) -> bool:
        """Whether ``query`` is the query text that produced ``event`` (needs ``history_digest_verifier``)."""
        return self._call(_Ops.verify_query_digest(event, query))


class AsyncAuditor(_AsyncBase):
    __doc__ = _AuditorDoc

    async def search_events(self, *, run: uuid.UUID | str | None = None, agent_id: str | None = None,
                            event: uuid.UUID | str | None = None, since: datetime | None = None,
                            until: datetime | None = None, limit: int = 50) -> list[dict[str, Any]]:
        return await self._call(_Ops.search_events(run, agent_id, event, since, until, limit))

    async def search_event_messages(self, event: uuid.UUID | str) -> list[dict[str, Any]]:
        return await self._call(_Ops.search_event_messages(event))

    async def verify_query_digest(self, event: uuid.UUID | str, query: str) -> bool:
        return await self._call(_Ops.verify_query_digest(event, query))
