"""The database fixtures themselves: a fresh migrated database per test, role connections."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

seen_databases: list[str] = []


@pytest.mark.parametrize("attempt", [1, 2])
def test_each_test_gets_its_own_migrated_database(conn, attempt):
    name = conn.execute("SELECT current_database()").fetchone()[0]
    assert name not in seen_databases
    seen_databases.append(name)
    assert conn.execute("SELECT count(*) FROM _yoyo_migration").fetchone()[0] > 0
    assert conn.execute("SELECT to_regnamespace('history') IS NOT NULL").fetchone()[0]
    # what one test writes, the next one does not see
    conn.execute("CREATE TABLE public.scratch (x int)")


def test_pgtap_is_installed(conn):
    assert conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pgtap'").fetchone()


def test_connect_as_a_client_role(connect_as):
    c = connect_as("history_searcher")
    assert c.execute("SELECT current_user, session_user").fetchone() == ("history_searcher", "history_searcher")
    with pytest.raises(errors.InsufficientPrivilege):
        c.execute("SELECT * FROM _yoyo_migration")


def test_make_database_gives_empty_databases(make_database):
    with psycopg.connect(make_database()) as c:
        assert c.execute("SELECT to_regnamespace('history')").fetchone()[0] is None
