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

import time

import psycopg
import pytest

from history_search.cluster import ThrowawayCluster
from history_search.migrations import apply_migrations
from tests.harness import call_search
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
