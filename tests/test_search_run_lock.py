"""Concurrent searches of one run read the run row under its lock (docs/testing.md, planted fault (c)).

A search locks its run row before it reads the run's evidence count, so a
concurrent search of the same run waits and then sees what the first one
admitted. Planted fault this catches: the run row read without a lock
(``SELECT`` instead of the locking ``UPDATE``); under READ COMMITTED the
searches then all start from the same count and each admits the same
messages as new, overrunning the budget (a CHECK violation, or an
``evidence_count`` larger than the run's evidence rows).

The race is made certain, not likely: an admin session holds
``history.conversation_search_events`` in SHARE mode, which the searches need
(ROW EXCLUSIVE) only to write their audit row, after they have read the run.
All searches start; once every one of them waits on a lock (with the run row
locked, one waits for the audit table and the rest for the run row; without
it, all wait for the audit table with the run already read) the admin lets go.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.harness import call_search, run_in_thread, wait_until_blocked

SEARCHERS = 6


def build_world(conn) -> object:
    conn.execute("SELECT history.upsert_account('agent', 'agent'), history.upsert_account('alice', 'person')")
    conn.execute("SELECT history.upsert_conversation('big', 'channel')")
    conn.execute("SELECT history.add_member('big', 'agent', '2026-01-01'), history.add_member('big', 'alice', '2026-01-01')")
    with conn.cursor() as cur:
        cur.executemany("SELECT history.post_message(%s, 'big', 'alice', %s, %s::timestamptz)",
                        [(f"m{i:03d}", f"alpha note {i}", f"2026-02-01T{i // 60:02d}:{i % 60:02d}:00Z")
                         for i in range(300)])
    conn.execute("SELECT history.post_message('now', 'big', 'alice', 'hello', '2026-03-01')")
    return conn.execute("SELECT history.begin_run('agent', 'big', 'alice', 'now')").fetchone()[0]


def wait_until_all_wait_for_locks(observer, pids: list[int]) -> None:
    for _ in range(500):
        waiting = observer.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY (%s) AND wait_event_type = 'Lock'",
            (pids,)).fetchone()[0]
        if waiting == len(pids):
            return
        time.sleep(0.02)
    pytest.fail("the searches never all waited for a lock")


@pytest.mark.parametrize("round_", range(2))
def test_concurrent_searches_of_one_run_see_each_others_admissions(db_dsn, round_):
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        run = build_world(setup)
    outcomes: list = [None] * SEARCHERS
    conns = [psycopg.connect(db_dsn, autocommit=True) for _ in range(SEARCHERS)]
    try:
        with psycopg.connect(db_dsn) as gate, psycopg.connect(db_dsn, autocommit=True) as observer:
            gate.execute("LOCK TABLE history.conversation_search_events IN SHARE MODE")

            def search(i: int) -> None:
                try:
                    # The same query each time: the 20 newest matches and their neighbours.
                    r = call_search(conns[i], run, "alpha", limit=20)
                    outcomes[i] = (r["status"], r["budget_used"], len(r["hits"]))
                except psycopg.Error as exc:
                    outcomes[i] = exc

            threads = [threading.Thread(target=search, args=(i,)) for i in range(SEARCHERS)]
            for t in threads:
                t.start()
            wait_until_all_wait_for_locks(observer, [c.info.backend_pid for c in conns])
            gate.rollback()
            for t in threads:
                t.join(60)
            assert not any(t.is_alive() for t in threads)
    finally:
        for c in conns:
            c.close()

    errors = [o for o in outcomes if isinstance(o, Exception)]
    assert not errors, errors
    # Each search admitted the same messages (20 consecutive hits and their neighbours);
    # only the first paid for them, so every one reports the same budget used.
    used = {o[1] for o in outcomes}
    assert len(used) == 1 and all(o[2] == 20 for o in outcomes), outcomes
    (n,) = used
    assert n == 22
    with psycopg.connect(db_dsn) as conn:
        count, rows, searches = conn.execute(
            "SELECT r.evidence_count, (SELECT count(*) FROM history.run_evidence e WHERE e.run_key = r.run_key), "
            "(SELECT count(*) FROM history.conversation_search_events e WHERE e.run_key = r.run_key) "
            "FROM history.runs r WHERE r.run_token = %s", (run,)).fetchone()
    assert (count, rows, searches) == (n, n, SEARCHERS)


def test_end_run_waits_for_the_search_under_way_not_for_the_queue(db_dsn):
    """end_run of a run whose searches queue on its row waits for the one under way only.

    Searches hold the run row for their whole length, so a burst of them queues
    on it. end_run announces itself first (a lock every search's lock allows);
    no queued search then searches: each one that gets the row stops with HS002,
    and end_run follows the one search that already had the row. Without that,
    end_run waited for the queued searches in turn, and they searched.
    Asserted by outcomes, not timings: the run holds one search's audit, and
    every other search was refused without one.
    """
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        run = build_world(setup)
    outcomes: list = [None] * SEARCHERS
    conns = [psycopg.connect(db_dsn, autocommit=True) for _ in range(SEARCHERS)]
    runtime = psycopg.connect(db_dsn, autocommit=True)
    try:
        with psycopg.connect(db_dsn) as gate, psycopg.connect(db_dsn, autocommit=True) as observer:
            gate.execute("LOCK TABLE history.conversation_search_events IN SHARE MODE")

            def search(i: int) -> None:
                try:
                    outcomes[i] = call_search(conns[i], run, "alpha", limit=20)
                except psycopg.Error as exc:
                    outcomes[i] = exc

            threads = [threading.Thread(target=search, args=(i,)) for i in range(SEARCHERS)]
            for t in threads:
                t.start()
            # One search holds the run row and waits for the audit table; the rest queue on the row.
            wait_until_all_wait_for_locks(observer, [c.info.backend_pid for c in conns])
            ender, box = run_in_thread(lambda: runtime.execute("SELECT history.end_run(%s)", (run,)))
            wait_until_blocked(observer, runtime.info.backend_pid, "end_run")
            gate.rollback()
            for t in [*threads, ender]:
                t.join(60)
            assert not any(t.is_alive() for t in [*threads, ender])
    finally:
        for c in [*conns, runtime]:
            c.close()

    assert "error" not in box, box.get("error")
    done = [o for o in outcomes if isinstance(o, dict)]
    refused = [o for o in outcomes if isinstance(o, Exception)]
    # The search under way either got its hits, or end_run came between its commit and its
    # reveal and dropped them (HS002 too); every other search was refused.
    assert len(done) <= 1 and all(o["hits"] for o in done), outcomes
    assert all(e.sqlstate == "HS002" and "has ended" in str(e) and str(run) not in str(e) for e in refused), refused
    with psycopg.connect(db_dsn) as conn:
        ended, searches, count, rows = conn.execute(
            "SELECT r.ended_at IS NOT NULL, "
            "(SELECT count(*) FROM history.conversation_search_events e WHERE e.run_key = r.run_key), "
            "r.evidence_count, (SELECT count(*) FROM history.run_evidence e WHERE e.run_key = r.run_key) "
            "FROM history.runs r WHERE r.run_token = %s", (run,)).fetchone()
    assert (ended, searches) == (True, 1), outcomes
    assert count == rows == 22


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_a_search_stops_while_an_end_run_of_its_run_is_under_way(db_dsn, isolation):
    """The announcement alone (end_run's FOR KEY SHARE on the run row, held here by hand)
    stops a search that gets the row, before it writes anything; gone, the run searches again."""
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        run = build_world(setup)
    with psycopg.connect(db_dsn) as ender, psycopg.connect(db_dsn, autocommit=True) as searcher:
        searcher.execute(f"SET default_transaction_isolation = '{isolation}'")
        ender.execute("SELECT 1 FROM history.runs WHERE run_token = %s FOR KEY SHARE", (run,))
        with pytest.raises(psycopg.Error) as refused:
            call_search(searcher, run, "alpha")
        assert refused.value.sqlstate == "HS002" and "has ended" in str(refused.value)
        assert refused.value.diag.message_detail == "end_run is ending it."
        assert str(run) not in str(refused.value)
        ender.rollback()  # the end_run that announced itself did not happen
        assert call_search(searcher, run, "alpha")["hits"]
    with psycopg.connect(db_dsn) as conn:
        assert conn.execute(
            "SELECT count(*) FROM history.conversation_search_events e JOIN history.runs r USING (run_key) "
            "WHERE r.run_token = %s", (run,)).fetchone()[0] == 1
