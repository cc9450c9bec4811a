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
    p = sub.add_parser("demo", help="run an agent turn against a throwaway local PostgreSQL")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    print("history-search demo: not yet available")
    return 0


# -- the parser ------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_migrate, add_demo]


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
