"""Writes to one message serialise, over two real sessions.

Session A writes a message and holds its transaction open; session B writes
the same message and must wait for A's lock; A commits; B then sees what A
committed. A delete that B waited for is seen: an edit or a second delete is
HS004, and a deleted message never comes back to search.
"""


import psycopg
import pytest

from tests.harness import call_search, run_in_thread, wait_until_blocked


def world(conn):
    for account, kind in [("bot", "agent"), ("alice", "person")]:
        conn.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    conn.execute("SELECT history.upsert_conversation('team', 'group')")
    for account in ("bot", "alice"):
        conn.execute("SELECT history.add_member('team', %s, '2026-01-01')", (account,))
    conn.execute("SELECT history.post_message('m1', 'team', 'alice', 'the walrus plan', '2026-02-01')")
    conn.execute("SELECT history.post_message('ask', 'team', 'alice', 'any news?', '2026-02-02')")


def race(db_dsn, first_sql, second_sql, isolation=None):
    """Run ``first_sql`` in session A (uncommitted), ``second_sql`` in session B, which
    must wait for A; commit A; return B's error (or None once B has committed)."""
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        world(setup)
    with psycopg.connect(db_dsn) as a, psycopg.connect(db_dsn) as b, \
            psycopg.connect(db_dsn, autocommit=True) as observer:
        if isolation is not None:
            b.isolation_level = isolation
        b.execute("SELECT 1")  # B's transaction (and, under REPEATABLE READ, its snapshot) begins before A commits
        a.execute(first_sql)
        thread, box = run_in_thread(lambda: b.execute(second_sql))
        wait_until_blocked(observer, b.info.backend_pid)
        a.commit()
        thread.join(30)
        assert not thread.is_alive()
        if "error" in box:
            b.rollback()
            return box["error"]
        b.commit()
        return None


def state(db_dsn):
    with psycopg.connect(db_dsn, autocommit=True) as c:
        events = [r[0] for r in c.execute(
            "SELECT e.event_kind FROM history.message_events e JOIN history.messages m USING (message_key)"
            " WHERE m.message_id = 'm1' ORDER BY e.event_key")]
        current = c.execute(
            "SELECT e.event_kind FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key"
            " WHERE m.message_id = 'm1'").fetchone()[0]
        run = c.execute("SELECT history.begin_run('bot', 'team', 'alice', 'ask')").fetchone()[0]
        hits = [h["message_id"] for h in call_search(c, run, "walrus")["hits"]]
        return events, current, hits


def assert_hs004(error):
    assert isinstance(error, psycopg.Error), error
    assert error.diag.sqlstate == "HS004", error
    assert "'m1'" in error.diag.message_primary


@pytest.mark.parametrize("round_", range(3))
def test_an_edit_waiting_for_a_delete_sees_it(db_dsn, round_):
    error = race(db_dsn, "SELECT history.delete_message('m1', '2026-02-03')",
                 "SELECT history.edit_message('m1', 'the walrus plan, revised', '2026-02-04')")
    assert_hs004(error)
    assert state(db_dsn) == (["created", "deleted"], "deleted", []), "the deleted message came back"


@pytest.mark.parametrize("round_", range(3))
def test_a_second_delete_waiting_for_the_first_is_hs004(db_dsn, round_):
    error = race(db_dsn, "SELECT history.delete_message('m1', '2026-02-03')",
                 "SELECT history.delete_message('m1', '2026-02-04')")
    assert_hs004(error)
    assert state(db_dsn) == (["created", "deleted"], "deleted", [])


def test_a_delete_waiting_for_an_edit_follows_it(db_dsn):
    error = race(db_dsn, "SELECT history.edit_message('m1', 'the walrus plan, revised', '2026-02-03')",
                 "SELECT history.delete_message('m1', '2026-02-04')")
    assert error is None
    assert state(db_dsn) == (["created", "edited", "deleted"], "deleted", [])


def test_two_edits_serialise_in_commit_order(db_dsn):
    error = race(db_dsn, "SELECT history.edit_message('m1', 'walrus one', '2026-02-03')",
                 "SELECT history.edit_message('m1', 'walrus two', '2026-02-04')")
    assert error is None
    events, current, hits = state(db_dsn)
    assert (events, current, hits) == (["created", "edited", "edited"], "edited", ["m1"])
    with psycopg.connect(db_dsn, autocommit=True) as c:
        body = c.execute(
            "SELECT e.body FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key"
            " WHERE m.message_id = 'm1'").fetchone()[0]
    assert body == "walrus two"


def test_under_repeatable_read_the_waiting_edit_must_retry(db_dsn):
    """A REPEATABLE READ writer cannot see the delete it waited for: it gets 40001 (retry), never success."""
    error = race(db_dsn, "SELECT history.delete_message('m1', '2026-02-03')",
                 "SELECT history.edit_message('m1', 'the walrus plan, revised', '2026-02-04')",
                 isolation=psycopg.IsolationLevel.REPEATABLE_READ)
    assert isinstance(error, psycopg.Error) and error.diag.sqlstate == "40001", error
    assert state(db_dsn) == (["created", "deleted"], "deleted", [])
