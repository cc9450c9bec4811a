"""Typed errors of the history-search client.

Every function of the SQL surface raises its own errors as SQLSTATEs of the
custom class ``HS`` (docs/sql-reference.md, "Errors"). The client turns each
into one exception class, in one place (:func:`translate`), all under
:class:`HistorySearchError`:

=========  =====================  ============================================
SQLSTATE   class                  meaning
=========  =====================  ============================================
``HS001``  :class:`InvalidArgument`  an argument is invalid (also a ``ValueError``)
``HS002``  :class:`UnknownRun`       the run token is unknown, or the run has ended
``HS003``  :class:`NotFound`         unknown account, conversation, message or proof
``HS004``  :class:`Conflict`         a write conflicts with what is recorded
``HS005``  :class:`DeliveryBlocked`  the reply's evidence no longer passes
``2D000``  :class:`SearchInTransaction`  a search was called inside a transaction
other      :class:`DatabaseError`    anything else from the driver (``from`` the original)
=========  =====================  ============================================

An ``HS`` code this client does not know yet becomes a plain
:class:`HistorySearchError` with that ``sqlstate``. Exceptions that are not
driver errors (a ``TypeError`` of the caller's, a ``KeyboardInterrupt``) pass
through untouched.

Each exception carries what the server said: ``sqlstate``, ``message`` (the
primary message, which names the offending value), ``detail`` and ``hint``.
The original driver exception stays available as ``__cause__``.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import psycopg

__all__ = [
    "Conflict",
    "DatabaseError",
    "DeliveryBlocked",
    "HistorySearchError",
    "InvalidArgument",
    "NotFound",
    "SearchInTransaction",
    "UnknownRun",
    "translate",
    "wrap_errors",
]


class HistorySearchError(Exception):
    """Base of every error the client raises.

    ``sqlstate`` is the server's SQLSTATE (``None`` when the error was found by
    the client before anything was sent); ``message``, ``detail`` and ``hint``
    are the server's fields of the same names (``detail``/``hint`` may be None).
    """

    #: the SQLSTATE this class stands for (None for the base and DatabaseError)
    code: str | None = None

    def __init__(self, message: str, *, sqlstate: str | None = None,
                 detail: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate if sqlstate is not None else self.code
        self.detail = detail
        self.hint = hint

    def __str__(self) -> str:
        text = self.message
        if self.sqlstate:
            text = f"[{self.sqlstate}] {text}"
        if self.detail:
            text += f"\nDETAIL: {self.detail}"
        if self.hint:
            text += f"\nHINT: {self.hint}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, sqlstate={self.sqlstate!r})"


class InvalidArgument(HistorySearchError, ValueError):
    """HS001: an argument is invalid (a null where a value is required, a bad speaker, limit < 1…).

    Also raised by the client itself, before calling the server, for values it
    cannot send (a naive datetime, text with NUL characters): then ``sqlstate``
    is still ``HS001``, so callers need one ``except``.
    """

    code = "HS001"


class UnknownRun(HistorySearchError):
    """HS002: the run token is unknown, or the run has ended."""

    code = "HS002"


class NotFound(HistorySearchError):
    """HS003: an unknown account, conversation, message or proof was named."""

    code = "HS003"


class Conflict(HistorySearchError):
    """HS004: a conflicting write (editing a deleted message, a different re-post, …)."""

    code = "HS004"


class DeliveryBlocked(HistorySearchError):
    """HS005: the run's evidence no longer passes; the reply was not posted and the run stays open."""

    code = "HS005"


class SearchInTransaction(HistorySearchError):
    """A search was called inside a transaction (a block, a savepoint, an exception handler).

    ``history.search_history`` commits its audit before it returns hits, so it
    runs only at the top level: on an autocommit connection, or on a connection
    with no open transaction (the client then switches it to autocommit for the
    call). The server refuses it elsewhere with ``2D000``; the client refuses a
    connection that is inside a transaction before sending anything, with the
    same ``sqlstate``.
    """

    code = "2D000"


class DatabaseError(HistorySearchError):
    """Any other database error (connection lost, serialization failure, privilege…).

    ``sqlstate`` is the driver's (``None`` for errors without one, such as a
    closed connection). :attr:`retryable` is true for serialization failures
    and deadlocks, which the caller may retry in a new transaction.
    """

    @property
    def retryable(self) -> bool:
        return self.sqlstate in ("40001", "40P01")


_BY_CODE: dict[str, type[HistorySearchError]] = {
    cls.code: cls for cls in (InvalidArgument, UnknownRun, NotFound, Conflict, DeliveryBlocked)
}
# Not an HS code: PostgreSQL's "invalid transaction termination", which only
# the committing procedure history.search_history can raise on this surface.
_BY_CODE[SearchInTransaction.code] = SearchInTransaction


def translate(exc: BaseException) -> BaseException:
    """The client exception for a driver exception (to be raised ``from exc``).

    ``HSnnn`` codes map to their class, unknown ``HS`` codes to the base class,
    every other :class:`psycopg.Error` to :class:`DatabaseError`. Anything that
    is not a driver error is returned unchanged.
    """
    if isinstance(exc, HistorySearchError) or not isinstance(exc, psycopg.Error):
        return exc
    diag = exc.diag
    sqlstate = diag.sqlstate or getattr(exc, "sqlstate", None)
    message = diag.message_primary or str(exc).strip() or type(exc).__name__
    fields = {"sqlstate": sqlstate, "detail": diag.message_detail, "hint": diag.message_hint}
    if sqlstate in _BY_CODE:
        return _BY_CODE[sqlstate](message, **fields)
    if sqlstate and sqlstate.startswith("HS"):
        return HistorySearchError(message, **fields)
    return DatabaseError(message, **fields)


@contextlib.contextmanager
def wrap_errors() -> Iterator[None]:
    """Raise :func:`translate` of any driver error raised inside the block, ``from`` the original.

    A plain context manager, so it also wraps ``await`` expressions in async code.
    """
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc) from exc
