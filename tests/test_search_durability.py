"""A revealed hit's audit survives a crash, whatever the caller set.

A searcher login sets ``synchronous_commit = off`` and searches; the server then
stops as in a crash (``pg_ctl stop -m immediate``: what the WAL buffers still
hold is lost) right after the hits arrived. After restart every search whose
hits the caller received has its audit row, its evidence and its budget charge.

The cluster runs with ``fsync``, ``synchronous_commit`` and
``full_page_writes`` on (the test clusters' defaults are off), and with the WAL
writer slowed to its 10 s maximum so that an asynchronous commit is still in the
WAL buffers when the crash comes.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from history_search.cluster import ThrowawayCluster
from history_search.migrations import apply_migrations
from tests.harness import call_search, run_in_thread, wait_until_blocked
from tests.test_adversarial_query import build_world

QUERIES = ["launch budget review monday", "launch", "budget", "review", "monday", "plan", "notes", "launch notes"]
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on", "wal_writer_delay": "10s"}


def received_ids(result: dict) -> set[str]:
    out = set()
    for h in result["hits"]:
        out.add(h["message_id"])
        out.update(n["message_id"] for n in h["before"] + h["after"])
    return out


@pytest.fixture
def crashable():
    with ThrowawayCluster(settings=DURABLE) as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as admin:
            admin.execute("CREATE DATABASE hs_durable")
        url = cluster.dsn_for("hs_durable")
        apply_migrations(url)
        with psycopg.connect(url, autocommit=True) as admin:
            build_world(admin)
            admin.execute("CREATE ROLE durable_searcher LOGIN IN ROLE history_searcher")
        yield cluster, url


def audit_after_restart(url: str, searches: list[tuple]) -> list[tuple]:
    """For each (run, result) revealed: (event row present, run's evidence count, evidence rows)."""
    out = []
    with psycopg.connect(url, autocommit=True) as admin:
        for run, result in searches:
            out.append(admin.execute(
                """SELECT EXISTS (SELECT FROM history.conversation_search_events e
                                   WHERE e.search_event_id = %s),
                          r.evidence_count,
                          (SELECT count(*)::int FROM history.run_evidence v WHERE v.run_key = r.run_key)
                     FROM history.runs r WHERE r.run_token = %s""", (result["search_event_id"], run)).fetchone())
    return out


def test_revealed_searches_keep_their_audit_after_a_crash(crashable):
    cluster, url = crashable
    with psycopg.connect(url, autocommit=True) as admin:
        runs = [admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]
                for _ in QUERIES]
    searcher = psycopg.connect(cluster.dsn_for("hs_durable", user="durable_searcher"), autocommit=True)
    searcher.execute("SET synchronous_commit = off")
    searches = []
    for run, query in zip(runs, QUERIES):
        result = call_search(searcher, run, query)
        assert result["hits"], f"{query!r} found nothing (the test proves nothing)"
        searches.append((run, result))
    # A procedure of the caller's may commit the search asynchronously and then ask for its
    # hits: the reveal waits until that commit is on disk.
    searcher.execute("""CREATE PROCEDURE pg_temp.own(p_run uuid, p_query text, INOUT revealed jsonb DEFAULT NULL)
                        LANGUAGE plpgsql AS $$
                        DECLARE event uuid;
                        BEGIN
                            COMMIT;
                            event := (history._search_history(p_run, p_query)).search_event_id;
                            SET LOCAL synchronous_commit = off;
                            COMMIT;
                            revealed := to_jsonb(history._search_reveal(p_run, event, p_query));
                        END $$""")
    run = runs[0]
    (revealed,) = searcher.execute("CALL pg_temp.own(%s, %s)", (run, "review notes")).fetchone()
    assert revealed["hits"]
    searches.append((run, revealed))

    cluster.crash()
    searcher.close()
    cluster.restart()

    after = audit_after_restart(url, searches)
    assert all(present for present, _, _ in after), "a revealed search lost its audit row in the crash"
    # The budget charge of each run is at least what its last revealed search reported.
    used = {}
    for (run, result), (_, count, rows) in zip(searches, after):
        used[run] = max(used.get(run, 0), result["budget_used"])
        assert rows == count
    for (run, _), (_, count, _) in zip(searches, after):
        assert count >= used[run]
    # ... and its evidence holds every message the caller received.
    with psycopg.connect(url, autocommit=True) as admin:
        for run, result in searches:
            evidence = {r[0] for r in admin.execute(
                """SELECT m.message_id FROM history.run_evidence v JOIN history.messages m USING (message_key)
                     JOIN history.runs r ON r.run_key = v.run_key WHERE r.run_token = %s""", (run,))}
            assert received_ids(result) <= evidence


def test_the_reveal_waits_for_no_wal_but_the_searchs_own(crashable):
    """A search's own commit is synchronous, so its reveal has nothing to wait for.

    The reveal's own reads write WAL: looking the run up prunes the run row's
    page (a search updates that row), and nobody flushes that record soon, with
    the WAL writer at 10 s. A reveal that waited for every WAL record inserted
    before its flush check, its own included, sat out its whole bound (three
    ``wal_writer_delay``: 30 s here) on every such search. So did a first
    reveal in a session whose compile pruned ``pg_proc``'s TOAST page (dead
    versions of the functions a migration replaced). A wait that is not
    needed shows as seconds; no search here may take 10 s.
    """
    cluster, url = crashable
    with psycopg.connect(url, autocommit=True) as admin:
        runs = [admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]
                for _ in range(12)]
        # Every read of a run row's page then prunes it once a committed search left a dead version.
        admin.execute("ALTER TABLE history.runs SET (fillfactor = 10)")
    searcher = psycopg.connect(cluster.dsn_for("hs_durable", user="durable_searcher"), autocommit=True)
    try:
        for run, query in zip(runs[:3], ["launch", "budget", "review"]):
            started = time.monotonic()
            result = call_search(searcher, run, query)
            took = time.monotonic() - started
            assert result["hits"], f"{query!r} found nothing (the test proves nothing)"
            assert took < 10, f"the search of {query!r} took {took:.1f} s: its reveal waited for WAL not its own"
    finally:
        searcher.close()


def start_churn(url: str):
    """A session inserting rows, as fast as it can, in a transaction it never
    commits: WAL that nobody flushes soon. Returns (stop, inserted, thread)."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE TABLE IF NOT EXISTS public.churn (n bigint)")
    stop = threading.Event()
    inserted = []

    def churn():
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("BEGIN")
            while not stop.is_set():
                other.execute("INSERT INTO public.churn VALUES (1)")
                inserted.append(1)
            other.execute("ROLLBACK")

    writer = threading.Thread(target=churn)
    writer.start()
    while not inserted:
        time.sleep(0.01)
    return stop, inserted, writer


def test_the_reveal_waits_for_no_wal_that_others_inserted(crashable):
    """WAL that another session inserts between a search's commit and its reveal
    is not the search's, and nobody flushes it soon: here a session inserts
    rows in a transaction it never commits, with the WAL writer at 10 s. A
    reveal that waited until the flush passed the WAL's end sat out the WAL
    writer's next round for it (seconds, at random, up to three rounds). The
    procedure commits once more, synchronously, instead: ten searches here take
    nowhere near 10 s between them, and every one reveals its hits.
    """
    cluster, url = crashable
    with psycopg.connect(url, autocommit=True) as admin:
        runs = [admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]
                for _ in range(10)]
    stop, inserted, writer = start_churn(url)
    searcher = psycopg.connect(cluster.dsn_for("hs_durable", user="durable_searcher"), autocommit=True)
    try:
        started = time.monotonic()
        for run in runs:
            result = call_search(searcher, run, "launch")
            assert result["hits"], "the search found nothing (the test proves nothing)"
        took = time.monotonic() - started
    finally:
        stop.set()
        writer.join()
        searcher.close()
    assert len(inserted) > 100, "the other session inserted too little to stand between a commit and its reveal"
    assert took < 10, f"ten searches took {took:.1f} s: their reveals waited for WAL another session inserted"


def test_a_reveal_begun_before_its_search_committed_targets_the_commit(crashable):
    """The reveal's flush target must lie at or after the search's commit record.

    A caller holds a search's id before its commit (it called _search_history
    itself) and asks for the reveal from another session, which notes the WAL
    position and then waits for a lock while the search commits. The target
    noted before the commit is short of it: the reveal takes a new one once it
    sees the search committed. Seen here through the target that a deferred
    reveal keeps: past WAL that the searching transaction inserted after the
    reveal began.
    """
    cluster, url = crashable
    with psycopg.connect(url, autocommit=True) as admin:
        run, warm_run = (admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]
                         for _ in range(2))
        admin.execute("CREATE TABLE public.after_the_reveal_began (n bigint)")
    stop, _, writer = start_churn(url)
    searching = psycopg.connect(url)
    locker = psycopg.connect(url)
    revealer = psycopg.connect(cluster.dsn_for("hs_durable", user="durable_searcher"), autocommit=True)
    observer = psycopg.connect(url, autocommit=True)
    try:
        # Compiled and planned beforehand: a first call would wait for the lock
        # while compiling, before it notes anything.
        assert call_search(revealer, warm_run, "launch")["hits"]
        (event,) = searching.execute("SELECT (history._search_history(%s, 'launch')).search_event_id", (run,)).fetchone()
        # Queues behind the search's lock on search_reveals; the reveal, once it
        # has noted its target, queues behind this.
        locking, locked = run_in_thread(lambda: locker.execute(
            "LOCK TABLE history.search_reveals IN ACCESS EXCLUSIVE MODE"))
        wait_until_blocked(observer, locker.info.backend_pid, "the lock")
        revealing, revealed = run_in_thread(lambda: revealer.execute(
            "SELECT history._search_reveal(%s, %s, 'launch', p_defer => true) IS NULL", (run, event)).fetchone()[0])
        wait_until_blocked(observer, revealer.info.backend_pid, "the reveal")
        searching.execute("INSERT INTO public.after_the_reveal_began VALUES (1)")
        (after_the_reveal_began,) = searching.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        searching.commit()
        locking.join()
        locker.rollback()
        revealing.join()
        assert "error" not in revealed and "error" not in locked, (revealed, locked)
        target = observer.execute("SELECT flush_target FROM history.search_reveals WHERE search_event_id = %s",
                                  (event,)).fetchone()
    finally:
        stop.set()
        writer.join()
        for conn in (searching, locker, revealer, observer):
            conn.close()
    assert revealed["value"] is True and target is not None, (
        "the reveal did not defer: its target was short of the search's commit (or, unlikely with the other "
        "session's WAL, everything was flushed)")
    assert target[0] > after_the_reveal_began, (
        f"the deferred reveal's flush target {target[0]} is short of the search's commit (after {after_the_reveal_began})")
