"""The ``history-search`` command.

Each subcommand is one ``add_<name>(subparsers)`` function that registers its
parser and sets ``func`` to a handler taking the parsed arguments and returning
an exit code. To add a subcommand, write its two functions and list its
``add_<name>`` in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from . import __version__

DSN_ENV = "HISTORY_SEARCH_DSN"


def _add_dsn(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dsn",
        default=os.environ.get(DSN_ENV),
        help=f"libpq URL or key=value string of the target database (default: ${DSN_ENV})",
    )


def _require_dsn(args: argparse.Namespace) -> str:
    if not args.dsn:
        raise SystemExit(f"history-search {args.command}: no database given: pass --dsn URL or set {DSN_ENV}")
    return args.dsn


# -- migrate -------------------------------------------------------------------


def add_migrate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="apply every pending migration (sqitch plan, applied with yoyo)",
                       description="Apply every pending change of the sqitch plan with yoyo. "
                                   "Running it again changes nothing.")
    _add_dsn(p)
    p.add_argument("--dry-run", action="store_true", help="only list the changes that would be applied")
    p.set_defaults(func=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    from .migrations import apply_migrations, pending

    dsn = _require_dsn(args)
    if args.dry_run:
        todo = pending(dsn)
        if not todo:
            print("up to date")
        for name in todo:
            print(f"pending {name}")
        return 0
    applied = apply_migrations(dsn)
    if not applied:
        print("up to date")
    for name in applied:
        print(f"applied {name}")
    return 0


# -- demo ----------------------------------------------------------------------


def add_demo(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run an agent turn against a throwaway local PostgreSQL",
                       description="Start a throwaway PostgreSQL from the local server binaries (or use --dsn), "
                                   "migrate, load a sample world and show an agent turn of searches, "
                                   "the audit a DBA sees, and a blocked delivery.")
    p.add_argument("--dsn", default=None, help="use this database instead of a throwaway server")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo as demo

    return demo(args.dsn)


# -- search --------------------------------------------------------------------


def add_search(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="search as a run (needs the run token from begin_run)",
                       description="Call history.search_history for a run token and print the hits.")
    _add_dsn(p)
    p.add_argument("--run", required=True, help="run token (uuid) from history.begin_run")
    p.add_argument("query")
    p.add_argument("--speaker", default="anyone", choices=["anyone", "requester", "you"])
    p.add_argument("--after", help="RFC 3339 time, inclusive")
    p.add_argument("--before", help="RFC 3339 time, exclusive")
    p.add_argument("--limit", type=int, default=8)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_search)


def run_search(args: argparse.Namespace) -> int:
    import json
    from datetime import datetime

    import psycopg

    from .client import Search
    from .errors import HistorySearchError
    from .prompt import to_prompt

    when = {k: datetime.fromisoformat(v) if v else None for k, v in (("after", args.after), ("before", args.before))}
    with psycopg.connect(_require_dsn(args), autocommit=True) as conn:
        try:
            result = Search(conn, args.run).search(args.query, speaker=args.speaker, limit=args.limit, **when)
        except HistorySearchError as exc:
            print(f"history-search search: {exc.sqlstate}: {exc.message}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(result.to_dict(), default=str, indent=2))
    else:
        print(to_prompt(result, max_chars=100_000))
    return 0


# -- audit ---------------------------------------------------------------------


def add_audit(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="recent search events (history.search_audit)",
                       description="List recent search events from history.search_audit. "
                                   "Needs a login with history_auditor.")
    _add_dsn(p)
    p.add_argument("--run", help="only this run token")
    p.add_argument("--agent", help="only this agent account id")
    p.add_argument("--since", help="only events at or after this RFC 3339 time")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help="print JSON rows")
    p.set_defaults(func=run_audit)


AUDIT_COLUMNS = ["searched_at", "agent_id", "run_id", "status", "hit_count", "selected_count",
                 "excluded_perspective", "excluded_audience", "excluded_lineage", "budget_used"]


def run_audit(args: argparse.Namespace) -> int:
    import json

    import psycopg
    from psycopg.rows import dict_row

    where, params = [], {"limit": args.limit}
    for column, value, name in (("run_id", args.run, "run"), ("agent_id", args.agent, "agent")):
        if value:
            where.append(f"{column} = %({name})s")
            params[name] = value
    if args.since:
        where.append("searched_at >= %(since)s::timestamptz")
        params["since"] = args.since
    query = ("SELECT * FROM history.search_audit" + (" WHERE " + " AND ".join(where) if where else "")
             + " ORDER BY searched_at DESC, search_event_id LIMIT %(limit)s")
    with psycopg.connect(_require_dsn(args), autocommit=True, row_factory=dict_row) as conn:
        rows = conn.execute(query, params).fetchall()
    if args.json:
        print(json.dumps(rows, default=str, indent=2))
        return 0
    table = [[str(r[c]) for c in AUDIT_COLUMNS] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in table]) for i, c in enumerate(AUDIT_COLUMNS)]
    print("  ".join(c.ljust(w) for c, w in zip(AUDIT_COLUMNS, widths)))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    print(f"({len(rows)} events)")
    return 0


# -- verify-digest -------------------------------------------------------------


def add_verify_digest(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify-digest", help="did this query text produce a search event?",
                       description="Call history.verify_query_digest: prints true or false (exit 0 or 1).")
    _add_dsn(p)
    p.add_argument("event", help="search_event_id")
    p.add_argument("query")
    p.set_defaults(func=run_verify_digest)


def run_verify_digest(args: argparse.Namespace) -> int:
    import psycopg

    with psycopg.connect(_require_dsn(args), autocommit=True) as conn:
        ok = conn.execute("SELECT history.verify_query_digest(%s::uuid, %s)", (args.event, args.query)).fetchone()[0]
    print("true" if ok else "false")
    return 0 if ok else 1


# -- bench ---------------------------------------------------------------------


def add_bench(sub: argparse._SubParsersAction) -> None:
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


def add_eval(sub: argparse._SubParsersAction) -> None:
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

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_migrate, add_demo, add_search, add_audit, add_verify_digest, add_bench,
    add_eval,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="history-search", description="Conversation-history search for AI agents, inside PostgreSQL."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one readable line, not a traceback, for operational errors
        import psycopg

        from .migrations import PlanError

        if isinstance(exc, (psycopg.Error, PlanError)):
            print(f"history-search {args.command}: {exc}", file=sys.stderr)
            for note in getattr(exc, "__notes__", []):
                print(f"  {note}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
