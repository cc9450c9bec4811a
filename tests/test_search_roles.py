"""search_history through a real login of each client role.

A login that is a member of history_searcher can search with a run token and
do nothing else: no table, no runtime function, no auditor view.
"""

import uuid

import psycopg
import pytest
from psycopg import errors, sql

from tests.harness import call_search


@pytest.fixture
def login(db_dsn):
    """Make a login role in the given group role; yield a DSN for it."""
    made = []

    def make(group):
        name = f"hs_test_{group}_{uuid.uuid4().hex[:8]}"
        password = uuid.uuid4().hex
        with psycopg.connect(db_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                    sql.Identifier(name), sql.Literal(password), sql.Identifier(group)
                )
            )
        made.append(name)
        return psycopg.conninfo.make_conninfo(db_dsn, user=name, password=password)

    yield make
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        for name in made:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def small_world(conn):
    for account, kind in [("agent", "agent"), ("alice", "person"), ("bob", "person")]:
        conn.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    conn.execute("SELECT history.upsert_conversation('team', 'group')")
    conn.execute("SELECT history.upsert_conversation('dm', 'direct')")
    for conv, account in [("team", "agent"), ("team", "alice"), ("dm", "agent"), ("dm", "bob")]:
        conn.execute("SELECT history.add_member(%s, %s, '2026-01-01')", (conv, account))
    conn.execute("SELECT history.post_message('t1', 'team', 'alice', 'the launch is on monday', '2026-02-01')")
    conn.execute("SELECT history.post_message('d1', 'dm', 'bob', 'private: the launch slipped', '2026-02-02')")
    conn.execute("SELECT history.post_message('t2', 'team', 'alice', 'when is the launch?', '2026-02-03')")
    return conn.execute("SELECT history.begin_run('agent', 'team', 'alice', 't2')").fetchone()[0]


def test_searcher_searches_and_reads_nothing(db_dsn, login):
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        run = small_world(conn)
    searcher = login("history_searcher")
    with psycopg.connect(searcher, autocommit=True) as conn:
        ids = [h["message_id"] for h in call_search(conn, run, "launch")["hits"]]
        assert ids == ["t1"]  # the DM is not readable by alice

        for table in ["history.messages", "history.message_events", "history.runs",
                      "history.message_search_documents", "history.query_digest_keys",
                      "history.conversation_search_events", "history.search_audit"]:
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(f"SELECT 1 FROM {table} LIMIT 1")
        for call in ["SELECT history.begin_run('agent', 'team', 'alice', 't2')",
                     "SELECT history.post_message('x', 'team', 'alice', 'forged', now())",
                     "SELECT history._message_json(1, 1, 1, '{}', 10)",
                     f"SELECT * FROM history.check_delivery('{run}')"]:
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(call)
        with pytest.raises(psycopg.Error) as forged:
            conn.execute("CALL history.search_history(%s, 'launch')", (uuid.uuid4(),))
        assert forged.value.diag.sqlstate == "HS002"


def test_auditor_sees_events_but_no_text(db_dsn, login):
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        run = small_world(conn)
        event = call_search(conn, run, "launch monday")["search_event_id"]
    auditor = login("history_auditor")
    with psycopg.connect(auditor, autocommit=True) as conn:
        row = conn.execute("SELECT hit_message_ids, excluded_perspective FROM history.search_audit").fetchone()
        assert row[0] == ["t1"]
        dump = conn.execute("SELECT string_agg(a::text, ' ') FROM history.search_audit a").fetchone()[0]
        dump += conn.execute("SELECT string_agg(a::text, ' ') FROM history.search_audit_messages a").fetchone()[0]
        assert "launch" not in dump and "monday" not in dump
        assert str(run) not in dump  # a run token is a live capability: the views show its SHA-256
        # verify_query_digest is a dictionary oracle for short queries: its own role, granted explicitly
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SELECT history.verify_query_digest(%s, 'launch monday')", (event,))
    with psycopg.connect(login("history_digest_verifier"), autocommit=True) as conn:
        assert conn.execute("SELECT history.verify_query_digest(%s, '  Launch   MONDAY ')", (event,)).fetchone()[0]
        assert not conn.execute("SELECT history.verify_query_digest(%s, 'launch tuesday')", (event,)).fetchone()[0]
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM history.search_audit")
    with psycopg.connect(auditor, autocommit=True) as conn:
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SELECT body FROM history.message_events LIMIT 1")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("CALL history.search_history(%s, 'launch')", (run,))
