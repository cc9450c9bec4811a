"""The ``history-search`` command.

Each subcommand is one ``add_<name>(subparsers)`` function that registers its
parser and sets ``func`` to a handler taking the parsed arguments and returning
an exit code. To add a subcommand, write its two functions and list its
``add_<name>`` in ``SUBCOMMANDS``.

No input and no environment makes it print a traceback: a bad argument, an
unreachable or refusing database, a missing PostgreSQL installation — each is
one line on stderr, ``history-search <command>: <what is wrong>``, and a
non-zero exit (:data:`EXIT_CODES`). ``HISTORY_SEARCH_DEBUG=1`` shows the
traceback of an unexpected error.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

if TYPE_CHECKING:
    import uuid
    from typing import TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser]"

from . import __version__

DSN_ENV = "HISTORY_SEARCH_DSN"
RUN_ENV = "HISTORY_SEARCH_RUN"
DEBUG_ENV = "HISTORY_SEARCH_DEBUG"

EXIT_OK = 0
EXIT_NO_MATCH = 1  # verify-digest: the query did not produce the event
EXIT_NOT_OK = 1  # check: the database is not as the release made it
EXIT_ERROR = 2  # bad arguments or input, the database refused or could not be reached, no PostgreSQL
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_BROKEN_PIPE = 141  # stdout closed early (… | head): 128 + SIGPIPE, silently, as other Unix tools

EXIT_CODES = {
    EXIT_OK: "success (verify-digest: the query matches the event)",
    EXIT_NO_MATCH: "verify-digest: the query does not match the event; check: the database is not as its "
                   "release made it",
    EXIT_ERROR: "error: bad arguments or input, database error or unreachable, missing PostgreSQL or "
                "MCP SDK (one line on stderr)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "stdout was closed before the output was written (e.g. piped into head)",
}


class CliError(Exception):
    """A one-line error for stderr; ``main`` prefixes the command and exits with ``EXIT_ERROR``."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _add_dsn(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dsn",
        default=os.environ.get(DSN_ENV),
        help=f"libpq URL or key=value string of the target database (default: ${DSN_ENV})",
    )


def _require_dsn(args: argparse.Namespace) -> str:
    if not args.dsn:
        raise CliError(f"no database given: pass --dsn URL or set {DSN_ENV}")
    return str(args.dsn)


def _uuid(what: str) -> Callable[[str], "uuid.UUID"]:
    """An argparse type: a uuid, or a one-line error naming the value."""
    def parse(text: str) -> "uuid.UUID":
        import uuid

        try:
            return uuid.UUID(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} {text[:64]!r} is not a uuid") from None
    return parse


def _timestamp(text: str) -> datetime:
    """An argparse type: an RFC 3339 time with a time zone (as the tool takes it)."""
    from .tool import ToolArgumentError, _parse_time

    try:
        return _parse_time("time", text)
    except ToolArgumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:32]!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _connect(args: argparse.Namespace, **kwargs: Any) -> Any:
    import psycopg

    return psycopg.connect(_require_dsn(args), autocommit=True, **kwargs)


# -- migrate -------------------------------------------------------------------


def add_migrate(sub: Subparsers) -> None:
    p = sub.add_parser("migrate", help="apply every pending migration (sqitch plan, applied with yoyo)",
                       description="Apply every pending change of the sqitch plan with yoyo, printing "
                                   "'applied <change>' as each one commits. Running it again changes "
                                   "nothing. Needs PostgreSQL 14 or newer; refuses a database deployed "
                                   "with sqitch (one database, one migration registry).")
    _add_dsn(p)
    p.add_argument("--dry-run", action="store_true", help="only list the changes that would be applied")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object at the end instead of lines: {"applied": [...], "up_to_date": …} '
                        '(with --dry-run: {"pending": [...], "up_to_date": …})')
    p.set_defaults(func=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    import json

    from .migrations import MigrationError, apply_migrations, pending

    dsn = _require_dsn(args)

    def line(text: str) -> None:
        print(text, flush=True)  # one line as each change commits, not all at the end

    try:
        if args.dry_run:
            todo = pending(dsn)
            if args.json:
                print(json.dumps({"pending": todo, "up_to_date": not todo}))
                return 0
            if not todo:
                line("up to date")
            for name in todo:
                line(f"pending {name}")
            return 0
        applied = apply_migrations(dsn, on_applied=None if args.json else (lambda name: line(f"applied {name}")))
    except MigrationError as exc:
        print(f"history-search migrate: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(json.dumps({"applied": applied, "up_to_date": not applied}))
    elif not applied:
        line("up to date")
    return 0


# -- distribute ----------------------------------------------------------------


def add_distribute(sub: Subparsers) -> None:
    p = sub.add_parser("distribute", help="lay a migrated database out on Citus (run on the coordinator)",
                       description="On a Citus coordinator, after migrate, as a superuser: hash-distribute every "
                                   "table of schema history that has a tenant_key column by it (co-located), make "
                                   "every other table a reference table, and create the schema's functions on "
                                   "every node; make the auditor's views read through their SECURITY DEFINER "
                                   "functions; lets history_owner log in on the workers only. One transaction for "
                                   "the tables. Prints what it changed; running it again changes nothing and says "
                                   "'up to date' (docs/scale-out.md).")
    _add_dsn(p)
    p.add_argument("--json", action="store_true",
                   help='one JSON object: {"distributed", "reference", "functions", "views", "changed", '
                        '"workers", "up_to_date"}')
    p.set_defaults(func=run_distribute)


def run_distribute(args: argparse.Namespace) -> int:
    import json

    from .distribute import DistributeError, distribute

    try:
        layout = distribute(_require_dsn(args))
    except DistributeError as exc:
        print(f"history-search distribute: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(json.dumps(layout.as_dict()))
        return EXIT_OK
    for change in layout.changed:
        print(f"distributed: {change}")
    print(f"{'up to date' if layout.up_to_date else 'done'}: {len(layout.distributed)} tables distributed by "
          f"tenant_key, {len(layout.reference)} reference tables, {len(layout.functions)} functions, "
          f"on {len(layout.workers)} workers")
    return EXIT_OK


# -- check ---------------------------------------------------------------------


def add_check(sub: Subparsers) -> None:
    p = sub.add_parser("check", help="is the database deployed, at which release, and as the release made it?",
                       description="Say whether the database is deployed and by which registry, the release "
                                   "its schema is at, what is pending, and whether roles, owners, grants and "
                                   "SECURITY DEFINER settings are as the release made them: one line per "
                                   "problem. Read-only. Exit 0 only when all hold, 1 when something does not, "
                                   "2 when the check could not run. Run it as a superuser or a member of "
                                   "history_owner.")
    _add_dsn(p)
    p.add_argument("--json", action="store_true",
                   help='one JSON object: {"deployed", "registry", "release", "tool_version", '
                        '"deployed_changes", "pending", "problems", "ok"}')
    p.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    import json

    from .health import check_database

    health = check_database(_require_dsn(args))
    if args.json:
        print(json.dumps(health.as_dict()))
    else:
        for text in health.lines():
            print(text)
    return EXIT_OK if health.ok else EXIT_NOT_OK


# -- reindex -------------------------------------------------------------------


def add_reindex(sub: Subparsers) -> None:
    p = sub.add_parser("reindex", help="rebuild the search projection with the current text analysis",
                       description="Recompute every message's search document (history.reindex_documents) "
                                   "in committed batches, printing a line per batch. Interrupted, it continues "
                                   "where it stopped when run again. Run it after changing a conversation's "
                                   "language or the analysis (docs/text-analysis.md). Needs the schema owner "
                                   "or a superuser.")
    _add_dsn(p)
    p.add_argument("--batch-size", type=int, default=1000, help="messages per committed batch (default 1000)")
    p.add_argument("--restart", action="store_true",
                   help="start from the first message even if an interrupted re-index could be resumed")
    p.set_defaults(func=run_reindex)


def run_reindex(args: argparse.Namespace) -> int:
    # _connect gives an autocommit connection: the procedure commits each batch
    # itself, so it must not run in a transaction block.
    with _connect(args) as conn:
        conn.add_notice_handler(lambda notice: print(notice.message_primary, flush=True))
        conn.execute("CALL history.reindex_documents(%s, %s)", (args.batch_size, args.restart))
    return 0


# -- purge ---------------------------------------------------------------------


def add_purge(sub: Subparsers) -> None:
    p = sub.add_parser("purge", help="remove ended runs and their audit from before a cut-off",
                       description="Remove the runs that ended before --before, with their search events, "
                                   "evidence and trace (history.purge), in committed batches, printing a line "
                                   "per batch. Open runs are never touched. Interrupted, run it again: it "
                                   "continues with what is left. Needs the schema owner or a superuser.")
    _add_dsn(p)
    p.add_argument("--before", type=_timestamp, required=True,
                   help="RFC 3339 cut-off with a time zone: runs that ended before it go")
    p.add_argument("--batch-size", type=_positive, default=500, help="runs per committed batch (default 500)")
    p.set_defaults(func=run_purge)


def run_purge(args: argparse.Namespace) -> int:
    # Autocommit: the procedure commits each batch itself.
    with _connect(args) as conn:
        conn.add_notice_handler(lambda notice: print(notice.message_primary, flush=True))
        conn.execute("CALL history.purge(%s, %s)", (args.before, args.batch_size))
    return EXIT_OK


# -- status --------------------------------------------------------------------


def add_status(sub: Subparsers) -> None:
    p = sub.add_parser("status", help="what the system is doing (history.status)",
                       description="Print history.status: the release deployed, open runs and the oldest "
                                   "one's age, searches and budget exhaustion per hour over the last day, the "
                                   "oldest audit row and the re-index's progress. No message text. Needs the "
                                   "schema owner or a login with history_auditor.")
    _add_dsn(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_status)


def run_status(args: argparse.Namespace) -> int:
    import json

    from psycopg.rows import dict_row

    with _connect(args) as conn:
        row = conn.cursor(row_factory=dict_row).execute("SELECT * FROM history.status").fetchone()
    if args.json:
        print(json.dumps(row, default=str, indent=2))
        return EXIT_OK
    age = row["oldest_open_run_age"]
    print(f"release: {row['release']}")
    print(f"open runs: {row['open_runs']}" + (f", oldest started {row['oldest_open_run_started_at']} ({age} ago)"
                                                if row["open_runs"] else ""))
    print(f"searches, last 24 h: {row['searches_last_day']}, budget exhausted: {row['budget_exhausted_last_day']}")
    for h in row["searches_by_hour"]:
        if h["searches"]:
            print(f"  {h['hour']}  {h['searches']:>8} searches  {h['budget_exhausted']:>6} budget exhausted")
    print(f"oldest audit row: {row['oldest_search_at'] or 'none'}")
    if row["reindex_started_at"] is None:
        print("re-index: never run")
    elif row["reindex_running"]:
        print(f"re-index: running since {row['reindex_started_at']}, {row['reindex_rows_done']} of about "
              f"{row['search_documents_estimate']} documents ({row['reindex_percent']}%)")
    else:
        print(f"re-index: finished {row['reindex_finished_at']} ({row['reindex_rows_done']} documents)")
    return EXIT_OK


# -- demo ----------------------------------------------------------------------


def add_demo(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="run an agent turn against a throwaway local PostgreSQL",
                       description="Start a throwaway PostgreSQL from the local server binaries (or use --dsn), "
                                   "migrate, load a sample world and show an agent turn of searches, "
                                   "the audit a DBA sees, and a blocked delivery. The server binaries are "
                                   "found on PATH, under /usr/lib/postgresql, or in $HISTORY_SEARCH_PG_BINDIR.")
    p.add_argument("--dsn", default=None,
                   help="use this database instead of a throwaway server: it is migrated, and the sample "
                        "data (ids starting 'acme-xxxx:') is written into it and left there")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo as demo

    return demo(args.dsn)


# -- begin-run / end-run -------------------------------------------------------


def add_begin_run(sub: Subparsers) -> None:
    p = sub.add_parser("begin-run", help="start an agent turn (history.begin_run); prints the run token",
                       description="Call history.begin_run and print the run token, for `search`, `mcp` or "
                                   "an agent host. Needs a login with history_runtime. "
                                   "Example: RUN=$(history-search begin-run agent-1 team alice msg-42)")
    _add_dsn(p)
    p.add_argument("agent", help="the agent account id")
    p.add_argument("conversation", help="the destination conversation id")
    p.add_argument("requester", help="the account the agent is answering")
    p.add_argument("current_message", help="the message id being answered")
    p.add_argument("--loaded", action="append", default=[], metavar="MESSAGE_ID",
                   help="a message id already in the prompt (repeat for each)")
    p.add_argument("--audience", action="append", default=None, metavar="ACCOUNT_ID",
                   help="an account of the destination audience (repeat for each); "
                        "default: the destination's open members, the agent excepted")
    p.add_argument("--tenant", default="default",
                   help="the tenant every id above belongs to (default: 'default'); the run carries it, "
                        "so search and end-run need none")
    p.set_defaults(func=run_begin_run)


def run_begin_run(args: argparse.Namespace) -> int:
    from .client import Runtime

    with _connect(args) as conn:
        run = Runtime(conn, tenant=args.tenant).begin_run(args.agent, args.conversation, args.requester, args.current_message,
                                      args.loaded, args.audience)
    print(run)
    return EXIT_OK


def add_end_run(sub: Subparsers) -> None:
    p = sub.add_parser("end-run", help="end a run without a reply (history.end_run)",
                       description="Call history.end_run: the run token stops working. "
                                   "Needs a login with history_runtime.")
    _add_dsn(p)
    p.add_argument("run", type=_uuid("run token"), help="the run token (uuid)")
    p.set_defaults(func=run_end_run)


def run_end_run(args: argparse.Namespace) -> int:
    from .client import Runtime

    with _connect(args) as conn:
        Runtime(conn).end_run(args.run)
    print(f"ended {args.run}")
    return EXIT_OK


# -- search --------------------------------------------------------------------


def add_search(sub: Subparsers) -> None:
    p = sub.add_parser("search", help="search as a run (needs the run token from begin-run)",
                       description="Call history.search_history for a run token and print the hits "
                                   "as the agent reads them (or --json). A history_searcher login is enough.")
    _add_dsn(p)
    p.add_argument("--run", type=_uuid("run token"), default=os.environ.get(RUN_ENV),
                   help=f"run token (uuid) from begin-run (default: ${RUN_ENV})")
    p.add_argument("query")
    p.add_argument("--speaker", default="anyone", choices=["anyone", "requester", "you"])
    p.add_argument("--after", type=_timestamp, help="RFC 3339 time with a time zone, inclusive")
    p.add_argument("--before", type=_timestamp, help="RFC 3339 time with a time zone, exclusive")
    p.add_argument("--limit", type=_positive, default=8, help="hits at most (default 8, capped at 20)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_search)


def run_search(args: argparse.Namespace) -> int:
    import json

    from .client import Search
    from .prompt import to_prompt

    if args.run is None:
        raise CliError(f"no run given: pass --run TOKEN or set {RUN_ENV}")
    with _connect(args) as conn:
        result = Search(conn, args.run).search(args.query, speaker=args.speaker, after=args.after,
                                               before=args.before, limit=args.limit)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(to_prompt(result, max_chars=100_000))
    return EXIT_OK


# -- mcp -----------------------------------------------------------------------


def add_mcp(sub: Subparsers) -> None:
    p = sub.add_parser("mcp", help="serve the search_history tool over MCP: streamable HTTP (many runs) or stdio "
                                   "(one run)",
                       description="Serve the search_history tool over MCP. With --http HOST:PORT: one long-lived "
                                   "server over streamable HTTP for many agent turns at once; each request names "
                                   "its run with 'Authorization: Bearer <run token>', set by the host. Without "
                                   "--http: stdio, bound to one run (--run), for hosts that start a server per "
                                   "turn. The model never chooses the run. Needs the 'mcp' extra: "
                                   "pip install 'history-search[mcp]'. A history_searcher login is enough.")
    _add_dsn(p)
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1; port 0 "
                        "picks a free one). Plain HTTP: put TLS in front of anything but loopback")
    p.add_argument("--run", type=_uuid("run token"), default=None,
                   help=f"stdio only: the run token (uuid) from begin-run (default: ${RUN_ENV})")
    p.add_argument("--strict", action="store_true",
                   help="publish the strict input schema (every argument required, the optional ones nullable)")
    p.add_argument("--pool-size", type=_positive, default=10,
                   help="HTTP only: most database connections at once (default: 10)")
    p.set_defaults(func=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    from .mcp_server import McpUnavailable, RunRefused, is_loopback, parse_listen, print_listening, serve, serve_http

    dsn = _require_dsn(args)
    try:
        if args.http is not None:
            if args.run is not None:
                raise CliError("--run is for stdio; over HTTP each request names its run with "
                               "Authorization: Bearer <run token>")
            try:
                host, port = parse_listen(args.http)
            except ValueError as exc:
                raise CliError(str(exc)) from None
            if not is_loopback(host):
                print(f"history-search mcp: warning: listening on {host}, not loopback, over plain HTTP: "
                      "run tokens cross the network in clear unless TLS is in front (see the README)",
                      file=sys.stderr, flush=True)
            serve_http(dsn, host, port, pool_size=args.pool_size, strict=args.strict, on_listening=print_listening)
            return EXIT_OK
        run = args.run
        if run is None and os.environ.get(RUN_ENV):
            try:
                run = _uuid(f"${RUN_ENV}")(os.environ[RUN_ENV])
            except argparse.ArgumentTypeError as exc:
                raise CliError(str(exc)) from None
        if run is None:
            raise CliError(f"no run given: pass --run TOKEN or set {RUN_ENV} (or serve many runs: --http HOST:PORT)")
        serve(dsn, run, strict=args.strict)
    except McpUnavailable as exc:
        raise CliError(str(exc)) from None
    except RunRefused as exc:
        raise CliError(f"{exc}: begin a new run") from None
    return EXIT_OK


# -- audit ---------------------------------------------------------------------


def add_audit(sub: Subparsers) -> None:
    p = sub.add_parser("audit", help="recent search events (history.search_audit)",
                       description="List recent search events from history.search_audit. "
                                   "Needs a login with history_auditor.")
    _add_dsn(p)
    p.add_argument("--run", type=_uuid("run token"), help="only this run token")
    p.add_argument("--tenant", help="only this tenant's searches")
    p.add_argument("--agent", help="only this agent account id")
    p.add_argument("--since", type=_timestamp, help="only events at or after this RFC 3339 time")
    p.add_argument("--limit", type=_positive, default=20)
    p.add_argument("--json", action="store_true", help="print JSON rows")
    p.set_defaults(func=run_audit)


AUDIT_COLUMNS = ["searched_at", "agent_id", "run_key", "status", "hit_count", "selected_count",
                 "excluded_perspective", "excluded_audience", "excluded_lineage", "budget_used"]


def run_audit(args: argparse.Namespace) -> int:
    import json

    from .client import Auditor

    with _connect(args) as conn:
        rows = Auditor(conn).search_events(run=args.run, tenant=args.tenant, agent_id=args.agent, since=args.since, limit=args.limit)
    if args.json:
        print(json.dumps(rows, default=str, indent=2))
        return EXIT_OK
    table = [[str(r[c]) for c in AUDIT_COLUMNS] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in table]) for i, c in enumerate(AUDIT_COLUMNS)]
    print("  ".join(c.ljust(w) for c, w in zip(AUDIT_COLUMNS, widths)))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    print(f"({len(rows)} events)")
    return EXIT_OK


# -- verify-digest -------------------------------------------------------------


def add_verify_digest(sub: Subparsers) -> None:
    p = sub.add_parser("verify-digest", help="did this query text produce a search event?",
                       description="Call history.verify_query_digest and print true or false. Exit status: "
                                   "0 the query matches, 1 it does not, 2 error (bad event id, database error). "
                                   "Needs a login with history_digest_verifier.")
    _add_dsn(p)
    p.add_argument("event", type=_uuid("search event id"), help="search_event_id")
    p.add_argument("query")
    p.set_defaults(func=run_verify_digest)


def run_verify_digest(args: argparse.Namespace) -> int:
    from .client import Auditor

    with _connect(args) as conn:
        ok = Auditor(conn).verify_query_digest(args.event, args.query)
    print("true" if ok else "false")
    return EXIT_OK if ok else EXIT_NO_MATCH


# -- bench ---------------------------------------------------------------------


def add_bench(sub: Subparsers) -> None:
    from .bench import add_arguments

    p = sub.add_parser("bench", help="benchmark search_history against its floor and peers' query shapes",
                       description="Generate a seeded world, load it, and measure F, B1, B0, P1 and P2 "
                                   "(see docs/benchmarks.md). The last line is a one-line summary.")
    add_arguments(p)
    p.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    from .bench import run

    return run(args)


# -- eval ----------------------------------------------------------------------


def add_eval(sub: Subparsers) -> None:
    from .relevance import add_arguments

    p = sub.add_parser("eval", help="relevance of search on LoCoMo-format conversations, next to BM25",
                       description="Load LoCoMo-format conversations through the runtime API, ask every question "
                                   "as a run through the client's search, and report recall, context recall and "
                                   "MRR next to BM25 and ts_rank on the same lexemes (see docs/relevance.md). "
                                   "The last line is a one-line summary.")
    add_arguments(p)
    p.set_defaults(func=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    from .relevance import run

    return run(args)


# -- the parser ------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[Subparsers], None]] = [
    add_migrate, add_distribute, add_check, add_reindex, add_purge, add_status, add_demo, add_begin_run, add_end_run, add_search, add_mcp, add_audit,
    add_verify_digest, add_bench, add_eval,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="history-search", description="Conversation-history search for AI agents, inside PostgreSQL.",
        epilog="exit status: " + "; ".join(f"{code} {what}" for code, what in EXIT_CODES.items()),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    """An exception as one line: the client's typed errors with their SQLSTATE, anything else as said."""
    from .errors import HistorySearchError

    if isinstance(exc, HistorySearchError):
        text = f"[{exc.sqlstate}] {exc.message}" if exc.sqlstate else exc.message
        if exc.hint:
            text += f" (hint: {exc.hint})"
    elif isinstance(exc, (CliError, OSError)) or type(exc).__module__.startswith(("psycopg", "history_search")):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc} (set {DEBUG_ENV}=1 for the traceback)"
    for note in getattr(exc, "__notes__", []):
        text += f" ({note})"
    return " ".join(text.split()) or type(exc).__name__


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except SystemExit:
        raise
    except Exception as exc:  # one readable line, never a traceback
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"history-search {args.command}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
