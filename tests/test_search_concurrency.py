"""The run budget under concurrent searches of one run, over real connections.

Two sessions search the same run at the same time, at READ COMMITTED and at
REPEATABLE READ (where a loser may get 40001 and retries, as a caller should).
The search commits by itself, so each session CALLs it in autocommit with the
isolation level as its default: the procedure's transactions take it.
Whatever the interleaving, the run ends at exactly 400 distinct evidence
messages, its counter agrees with its evidence rows, and every search that
returned has an audit row.
"""

import threading

import psycopg
import pytest
from psycopg import errors

from tests.harness import call_search

BUDGET = 400


def build_world(conn, messages=520):
    conn.execute("SELECT history.upsert_account('agent', 'agent')")
    conn.execute("SELECT history.upsert_account('alice', 'person')")
    conn.execute("SELECT history.upsert_conversation('big', 'channel')")
    conn.execute("SELECT history.add_member('big', 'agent', '2026-01-01')")
    conn.execute("SELECT history.add_member('big', 'alice', '2026-01-01')")
    with conn.cursor() as cur:
        cur.executemany(
            "SELECT history.post_message(%s, 'big', 'alice', %s, %s::timestamptz)",
            [(f"m{i:04d}", f"alpha word{i} beta", "2026-02-01T00:00:00Z") for i in range(messages)],
        )
    conn.execute("SELECT history.post_message('now', 'big', 'alice', 'hello', '2026-03-01')")
    return conn.execute("SELECT history.begin_run('agent', 'big', 'alice', 'now')").fetchone()[0]


def search_until_exhausted(dsn, run, isolation, side, barrier, outcomes):
    with psycopg.connect(dsn, autocommit=True) as conn:
        level = {psycopg.IsolationLevel.READ_COMMITTED: "read committed",
                 psycopg.IsolationLevel.REPEATABLE_READ: "repeatable read"}[isolation]
        conn.execute(f"SET default_transaction_isolation = '{level}'")
        barrier.wait()
        done = 0
        for _ in range(500):
            # Each successful search asks for other messages, so the budget
            # drains even when one side loses every race for a while.
            first = (done * 10 + side * 260) % 520
            query = " ".join(f"word{(first + k) % 520}" for k in range(10))
            try:
                r = call_search(conn, run, query, limit=20)
                row = (r["status"], r["budget_used"], r["search_event_id"])
            except errors.SerializationFailure:
                outcomes.append(("retry", None, None))
                continue
            outcomes.append(row)
            done += 1
            if row[0] == "search_budget_exhausted":
                return


@pytest.mark.parametrize(
    "isolation",
    [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ],
    ids=["read-committed", "repeatable-read"],
)
def test_concurrent_searches_never_exceed_the_budget(db_dsn, isolation):
    exhaust_the_budget_from_two_sessions(db_dsn, isolation)


def exhaust_the_budget_from_two_sessions(db_dsn, isolation):
    """Two sessions search one run until its budget is spent; the run ends at exactly the budget, every
    search that returned audited (tests/test_citus.py plays it on a Citus coordinator too)."""
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        run = build_world(conn)

    barrier = threading.Barrier(2)
    outcomes = [[], []]
    threads = [
        threading.Thread(target=search_until_exhausted, args=(db_dsn, run, isolation, i, barrier, outcomes[i]))
        for i in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)

    with psycopg.connect(db_dsn) as conn:
        count, evidence = conn.execute(
            "SELECT r.evidence_count, (SELECT count(*) FROM history.run_evidence e "
            "WHERE e.run_key = r.run_key AND e.tenant_key = r.tenant_key) "
            "FROM history.runs r WHERE r.run_token = %s",
            (run,),
        ).fetchone()
        audited = conn.execute(
            "SELECT count(*) FROM history.conversation_search_events e JOIN history.runs r USING (run_key, tenant_key) "
            "WHERE r.run_token = %s",
            (run,),
        ).fetchone()[0]
    returned = [o for side in outcomes for o in side if o[0] != "retry"]
    assert count == BUDGET
    assert evidence == BUDGET
    assert max(o[1] for o in returned) == BUDGET
    assert all(o[1] <= BUDGET for o in returned)
    assert audited == len(returned)
    assert {o[0] for o in returned} >= {"search_budget_exhausted"}
