"""Static checks of every PL/pgSQL function with plpgsql_check.

A wrong column or type inside a function body only fails when that line
runs; plpgsql_check finds it at once.
"""

import psycopg


def test_plpgsql_check_reports_no_errors(db_dsn):
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS plpgsql_check")
        functions = conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
            "WHERE p.pronamespace = 'history'::regnamespace AND l.lanname = 'plpgsql' ORDER BY 1"
        ).fetchall()
        assert len(functions) >= 15
        problems = []
        for (fn,) in functions:
            rows = conn.execute(
                "SELECT level, message, lineno FROM plpgsql_check_function_tb(%s::regprocedure) "
                "WHERE level = 'error'",
                (fn,),
            ).fetchall()
            problems += [(fn, *r) for r in rows]
        assert problems == []
