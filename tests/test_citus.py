"""history-search on Citus: migrate and distribute on a coordinator with two workers.

Collected only in the Citus job (``make test-citus``: ``HISTORY_SEARCH_CITUS=1``,
tests/conftest.py leaves this file out otherwise), which needs Citus installed
into the server's PostgreSQL (``$HISTORY_SEARCH_CITUS_SRC/build``). One
throwaway Citus cluster (a coordinator and two workers, three local servers) per
session; each test gets its own database on every node.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Iterator

import history_search
import psycopg
import psycopg.conninfo
import pytest
from psycopg import sql

from history_search.citus_cluster import ThrowawayCitusCluster
from history_search.client import Auditor, Runtime, Search
from history_search.cluster import ThrowawayCluster
from history_search.demo import World, load_world
from history_search.distribute import DistributeError, distribute, planned_layout
from history_search.errors import DatabaseError, HistorySearchError
from history_search.health import check_database
from history_search.migrations import apply_migrations

from .harness import call_search, run_in_thread, schema_dump
from .test_releases import PLAN, RELEASES, as_release, checkout, release_commit, table_counts, write_world

_names = itertools.count(1)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def citus() -> Iterator[ThrowawayCitusCluster]:
    with ThrowawayCitusCluster(workers=2) as cluster:
        yield cluster


@pytest.fixture
def citus_db(citus: ThrowawayCitusCluster) -> Iterator[str]:
    """A database with Citus on every node and the workers registered (not migrated); its coordinator URL."""
    name = f"hs_citus_{next(_names)}"
    url = citus.create_database(name)
    try:
        yield url
    finally:
        citus.drop_database(name)


@pytest.fixture
def migrated(citus_db: str) -> str:
    apply_migrations(citus_db)
    return citus_db


@pytest.fixture
def distributed(migrated: str) -> str:
    distribute(migrated)
    return migrated


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "history_search", *args], capture_output=True, text=True,
                          timeout=300)


def _on_nodes(citus: ThrowawayCitusCluster, url: str, query: str) -> list[object]:
    """``query``'s first column on the coordinator, then each worker, in this test's database."""
    name = url.rsplit("/", 1)[1]
    out = []
    for node in citus.nodes:
        with psycopg.connect(node.dsn_for(name), autocommit=True) as c:
            row = c.execute(query).fetchone()
            out.append(None if row is None else row[0])
    return out


# -- migrate ---------------------------------------------------------------------


def test_migrate_runs_on_a_coordinator_and_creates_on_the_coordinator_only(citus, citus_db):
    """Citus sends DDL to the workers as the current role; the migration runs as NOLOGIN history_owner."""
    proc = _cli("migrate", "--dsn", citus_db)
    assert proc.returncode == 0, proc.stderr
    assert "applied release@rework1" in proc.stdout
    # Nothing reached the workers yet (distribute takes the schema there), and the owner still cannot log in.
    assert _on_nodes(citus, citus_db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'history'") == [1, 0, 0]
    assert _on_nodes(citus, citus_db, "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'history_owner'") \
        == [False, False, False]
    again = _cli("migrate", "--dsn", citus_db)
    assert (again.returncode, again.stdout.strip()) == (0, "up to date")


# -- distribute ------------------------------------------------------------------


def test_distribute_lays_out_by_tenant_key_on_both_workers(citus, migrated):
    proc = _cli("distribute", "--dsn", migrated, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert not report["up_to_date"] and len(report["workers"]) == 2
    views = ["history.search_audit", "history.search_audit_messages", "history.status"]
    assert report["views"] == views
    assert [c for c in report["changed"] if c.startswith("view ")] == [
        f"view {v} reads history._{v.split('.')[1]}_rows()" for v in views]

    with psycopg.connect(migrated, autocommit=True) as c:
        placed = dict(c.execute(
            """SELECT logicalrelid::regclass::text,
                      CASE WHEN partmethod = 'h' THEN 'hash:' || column_to_column_name(logicalrelid, partkey)
                           WHEN repmodel = 't' THEN 'reference' ELSE partmethod::text END
                 FROM pg_dist_partition
                WHERE logicalrelid::regclass::text LIKE 'history.%'""").fetchall())
        # A tenant's rows: tenant_key and more in the primary key.
        tenant_tables = {t for (t,) in c.execute(
            """SELECT k.conrelid::regclass::text FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid
                 JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum = ANY (k.conkey)
                WHERE r.relnamespace = 'history'::regnamespace AND r.relkind = 'r' AND k.contype = 'p'
                  AND a.attname = 'tenant_key' AND cardinality(k.conkey) > 1""").fetchall()}
        delegated = c.execute(
            """SELECT d.objid::regprocedure::text, d.distribution_argument_index, d.force_delegation,
                      d.colocationid = (SELECT colocationid FROM pg_dist_partition
                                         WHERE logicalrelid = 'history.messages'::regclass)
                 FROM pg_dist_object d
                WHERE d.classid = 'pg_proc'::regclass AND d.distribution_argument_index IS NOT NULL
                ORDER BY 1""").fetchall()
        all_tables = {t for (t,) in c.execute(
            "SELECT oid::regclass::text FROM pg_class WHERE relnamespace = 'history'::regnamespace "
            "AND relkind = 'r'").fetchall()}
        colocations = c.execute(
            "SELECT count(DISTINCT colocationid) FROM pg_dist_partition WHERE partmethod = 'h' "
            "AND logicalrelid::regclass::text LIKE 'history.%'").fetchone()
        # Each distributed table has shards on both workers; each reference table a copy on every node.
        spread = dict(c.execute(
            """SELECT s.logicalrelid::regclass::text, count(DISTINCT p.nodename || ':' || p.nodeport)
                 FROM pg_dist_shard s JOIN pg_dist_shard_placement p USING (shardid)
                WHERE s.logicalrelid::regclass::text LIKE 'history.%%'
                  AND p.nodeport <> %s
                GROUP BY 1""", (citus.coordinator.port,)).fetchall())
        undistributed_functions = c.execute(
            """SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'history'::regnamespace
                  AND NOT EXISTS (SELECT 1 FROM pg_dist_object d
                                   WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid)""").fetchone()
    assert {"history.messages", "history.runs", "history.conversations"} <= tenant_tables
    assert {t: k for t, k in placed.items() if t in tenant_tables} == {t: "hash:tenant_key" for t in tenant_tables}
    assert {t: k for t, k in placed.items() if t not in tenant_tables} == \
        {t: "reference" for t in all_tables - tenant_tables}
    assert {"history.tenants", "history.search_settings", "history.query_digest_keys", "history.run_tokens"} \
        <= all_tables - tenant_tables
    # post_message's and record_reply's work, the search and its reveal, delegated by their tenant, with the
    # messages; nothing else.
    assert delegated == [
        ("history._post_message_in_tenant(integer,text,text,text,text,timestamp with time zone,text[])",
         0, True, True),
        ("history._record_reply_in_tenant(integer,uuid,text,text,timestamp with time zone)", 0, True, True),
        ("history._reveal_in_tenant(integer,uuid,uuid,text,boolean)", 0, True, True),
        ("history._search_in_tenant(integer,uuid,text,text,timestamp with time zone,timestamp with time zone,integer)",
         0, True, True)]
    assert colocations == (1,)
    # ... the group history.conversations started: it was distributed first (its shards have the lowest ids).
    with psycopg.connect(migrated, autocommit=True) as c:
        assert c.execute("SELECT s.logicalrelid::regclass::text FROM pg_dist_shard s JOIN pg_dist_partition p "
                         "USING (logicalrelid) WHERE p.partmethod = 'h' ORDER BY s.shardid LIMIT 1"
                         ).fetchone() == ("history.conversations",)
    assert spread == {t: 2 for t in all_tables}
    assert undistributed_functions == (0,)
    # The foreign keys were put back as they were.
    assert _on_nodes(citus, migrated, "SELECT count(*) FROM pg_constraint WHERE contype = 'f' "
                                      "AND connamespace = 'history'::regnamespace")[0] >= 20
    # The owner logs in on the workers only; the coordinator keeps it as the release made it.
    assert _on_nodes(citus, migrated, "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'history_owner'") \
        == [False, True, True]
    # And `check` on the coordinator still finds the database as its release made it.
    check = _cli("check", "--dsn", migrated)
    assert check.returncode == 0, check.stdout + check.stderr


def test_distribute_twice_changes_nothing(distributed):
    with psycopg.connect(distributed, autocommit=True) as c:
        before = c.execute("SELECT count(*), sum(shardid) FROM pg_dist_shard").fetchone()
    proc = _cli("distribute", "--dsn", distributed)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("up to date: ") and "distributed:" not in proc.stdout
    with psycopg.connect(distributed, autocommit=True) as c:
        assert c.execute("SELECT count(*), sum(shardid) FROM pg_dist_shard").fetchone() == before


def test_distribute_again_puts_the_function_back_behind_a_view_a_migrate_re_created(distributed):
    """A later change that re-creates an auditor's view (its one-node query) leaves it unreadable to the
    auditor's login on Citus until distribute runs again, as docs/scale-out.md tells to after every migrate."""
    deploy = (ROOT / "db" / "deploy" / "status_view.sql").read_text()
    create = deploy[deploy.index("CREATE VIEW history.status AS"):deploy.index(";", deploy.index("CREATE VIEW"))]
    with psycopg.connect(distributed, autocommit=True) as c:
        c.execute(create.replace("CREATE VIEW", "CREATE OR REPLACE VIEW"))
    with _auditor_login(distributed) as login:
        with psycopg.connect(login, autocommit=True) as c:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                c.execute("SELECT open_runs FROM history.status")
        proc = _cli("distribute", "--dsn", distributed)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[0] == "distributed: view history.status reads history._status_rows()"
        with psycopg.connect(login, autocommit=True) as c:
            assert c.execute("SELECT open_runs FROM history.status").fetchall() == [(0,)]


def test_distribute_refuses_before_migrate(citus_db):
    proc = _cli("distribute", "--dsn", citus_db)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "history-search distribute: schema history is not deployed here: run `history-search migrate` on the "
        "coordinator first"]


def test_distribute_refuses_a_worker(citus, migrated):
    name = migrated.rsplit("/", 1)[1]
    proc = _cli("distribute", "--dsn", citus.workers[0].dsn_for(name))
    assert proc.returncode == 2
    assert "is a Citus worker, not the coordinator" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_distribute_refuses_a_reference_table_referring_to_a_distributed_one(migrated):
    with psycopg.connect(migrated, autocommit=True) as c:
        c.execute("ALTER TABLE history.search_settings ADD COLUMN probe_conversation bigint, "
                  "ADD COLUMN probe_tenant integer, ADD CONSTRAINT probe_fk FOREIGN KEY "
                  "(probe_conversation, probe_tenant) REFERENCES history.conversations")
    with pytest.raises(DistributeError, match="reference table history.search_settings has a foreign key "
                                              r"\(probe_fk\) to history.conversations"):
        distribute(migrated)
    with psycopg.connect(migrated, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text "
                         "LIKE 'history.%'").fetchone() == (0,)


def test_distribute_is_one_transaction(migrated):
    """A table Citus refuses half-way (after the foreign keys are dropped and other tables distributed)
    leaves every table local and every foreign key in place."""
    with psycopg.connect(migrated, autocommit=True) as c:
        keys_before = c.execute("SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                                "FROM pg_constraint WHERE contype = 'f' AND connamespace = 'history'::regnamespace "
                                "ORDER BY 1, 2").fetchall()
        c.execute("SET ROLE history_owner")
        # A tenant's rows (tenant_key in the primary key) with a unique key without the distribution
        # column: Citus refuses to distribute this table.
        c.execute("CREATE TABLE history.probe_bad (k bigint, tenant_key integer NOT NULL DEFAULT 1, "
                  "PRIMARY KEY (k, tenant_key), UNIQUE (k))")
        c.execute("RESET ROLE")
    with pytest.raises(psycopg.Error, match="partition column|distribution column"):
        distribute(migrated)
    with psycopg.connect(migrated, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text "
                         "LIKE 'history.%'").fetchone() == (0,)
        assert c.execute("SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                         "FROM pg_constraint WHERE contype = 'f' AND connamespace = 'history'::regnamespace "
                         "ORDER BY 1, 2").fetchall() == keys_before


def test_planned_layout_follows_tenant_key(migrated):
    """The rule is the catalog's: a new table with tenant_key in its primary key is distributed, any other
    one is a reference table."""
    with psycopg.connect(migrated, autocommit=True) as c:
        c.execute("SET ROLE history_owner")
        c.execute("CREATE TABLE history.probe_with (k bigint, tenant_key integer NOT NULL DEFAULT 1, "
                  "PRIMARY KEY (k, tenant_key))")
        c.execute("CREATE TABLE history.probe_without (k bigint PRIMARY KEY)")
        c.execute("CREATE TABLE history.probe_lookup (k bigint PRIMARY KEY, tenant_key integer NOT NULL)")
        c.execute("RESET ROLE")
        distributed, reference = planned_layout(c)
    assert "history.probe_with" in distributed and "history.probe_without" in reference
    # A lookup that names a tenant but is keyed by something else (as run_tokens) is a reference table.
    assert "history.probe_lookup" in reference
    assert "history.tenants" in reference and "history.tenants" not in distributed
    layout = distribute(migrated)
    assert "distributed table history.probe_with by tenant_key" in layout.changed
    assert "reference table history.probe_without" in layout.changed


# -- security ----------------------------------------------------------------------


def test_client_roles_still_cannot_read_tables(distributed):
    with psycopg.connect(distributed, autocommit=True) as c:
        for role in ("history_searcher", "history_runtime", "history_auditor"):
            c.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
            for table in ("history.messages", "history.accounts", "history.run_evidence"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    c.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.SQL(table)))
            c.execute("RESET ROLE")


def test_an_auditors_login_reads_the_views_and_no_table_or_shard(citus, distributed):
    """What distribute lets the auditor's login do on Citus: read the three views (through the functions
    behind them); no table on the coordinator, no shard on a worker, no function but the views' ones."""
    name = distributed.rsplit("/", 1)[1]
    with psycopg.connect(distributed, autocommit=True) as c:
        tables = [t for (t,) in c.execute(
            """SELECT c.oid::regclass::text FROM pg_class c
                WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1""")]
        shards = c.execute(
            """SELECT n.nodename, n.nodeport, shard_name(s.logicalrelid, s.shardid)
                 FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
                 JOIN pg_class c ON c.oid = s.logicalrelid
                WHERE c.relnamespace = 'history'::regnamespace AND n.groupid <> 0""").fetchall()
    assert "history.messages" in tables and {(h, p) for h, p, _ in shards} == {
        (w.host, w.port) for w in citus.nodes[1:]}
    with _auditor_login(distributed) as login:
        with psycopg.connect(login, autocommit=True) as c:
            for view in ("history.search_audit", "history.search_audit_messages", "history.status"):
                c.execute(sql.SQL("SELECT * FROM {}").format(sql.SQL(view))).fetchall()
            for table in tables:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    c.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.SQL(table)))
            assert [f for (f,) in c.execute(
                """SELECT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'history'::regnamespace
                      AND has_function_privilege(p.oid, 'EXECUTE') ORDER BY 1""")] == [
                "_search_audit_messages_rows", "_search_audit_rows", "_status_rows", "schema_release"]
        user = psycopg.conninfo.conninfo_to_dict(login)["user"]
        for worker in citus.nodes[1:]:
            with psycopg.connect(host=worker.host, port=worker.port, dbname=name, user=user, autocommit=True) as w:
                for shard in [s for h, p, s in shards if (h, p) == (worker.host, worker.port)]:
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        w.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.SQL(shard)))


# -- a turn end to end, against one node ----------------------------------------------


@contextlib.contextmanager
def _as(dsn: str, role: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        yield c


def _refused(call) -> str | None:
    """The SQLSTATE a call fails with, or None when it succeeds."""
    try:
        call()
    except HistorySearchError as e:
        return e.sqlstate
    return None


def _turn(dsn: str) -> dict[str, object]:
    """The demo's world in two tenants holding the same ids (the second has one more matching message), and
    in each a turn: searches with hits, neighbours and the reveal (speaker and time filters, the budget),
    delivery of a reply relying on them, one refused after a hit is deleted, a run ended; the audit as the
    owner reads it, and the auditor's three views as a login that is a member of history_auditor reads them
    (on Citus, through the functions distribute puts behind them: docs/scale-out.md)."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    seen: dict[str, object] = {}
    runs: dict[str, str] = {}

    def hits(r) -> list[object]:
        # scores to 3 places: recency is measured from now(), a minute later on the second server
        return [(h.message_id, round(h.score, 3), [n.message_id for n in h.before], [n.message_id for n in h.after])
                for h in r.hits]

    with _as(dsn, "history_runtime") as rc, _as(dsn, "history_searcher") as sc, \
            psycopg.connect(dsn, autocommit=True) as oc:
        for tenant in ("t-one", "t-two"):
            rt = Runtime(rc, tenant=tenant)
            with rc.transaction():
                load_world(rt, w)
            if tenant == "t-two":
                rt.post_message(w.m("only-two"), w.launch, w.bob, "Atlas launch date: the 12th, confirmed.",
                                w.ago(minutes=30))
            rt.post_message(w.m("launch-7"), w.launch, w.alice,
                            "@helper where do we stand on the Atlas launch date?", w.ago(minutes=2))
            run = rt.begin_run(w.agent, w.launch, w.alice, w.m("launch-7"))
            search = Search(sc, run)
            results = [search.search(q, limit=5) for q in ("Atlas launch date", "security review risk",
                                                             "billing export")]
            results.append(search.search("Atlas", speaker="requester", limit=3))
            results.append(search.search("Atlas", after=w.ago(days=5), before=w.ago(hours=1), limit=3))
            seen[f"{tenant} hits"] = [hits(r) for r in results]
            seen[f"{tenant} budget"] = [(r.status, r.budget_used, r.budget_remaining) for r in results]
            seen[f"{tenant} delivery"] = [(p.message_id, p.reason) for p in rt.check_delivery(run)]
            rt.record_reply(run, w.m("launch-7-reply"), "The launch is planned for the 12th.", w.ago(minutes=1))
            seen[f"{tenant} replied"] = rc.execute("SELECT history.run_status(%s)", (run,)).fetchone()[0]

            # A second turn whose evidence loses a message before the reply.
            again = rt.begin_run(w.agent, w.launch, w.alice, w.m("launch-7"))
            first = Search(sc, again).search("Atlas launch date", limit=3)
            rt.delete_message(first.hits[0].message_id, w.ago(minutes=0.5))
            seen[f"{tenant} after delete"] = [(p.message_id, p.reason) for p in rt.check_delivery(again)]
            seen[f"{tenant} reply refused"] = _refused(
                lambda: rt.record_reply(again, w.m("launch-7-reply-2"), "Still the 12th.", w.ago(minutes=0.4)))
            rt.end_run(again)
            seen[f"{tenant} ended"] = (rc.execute("SELECT history.run_status(%s)", (again,)).fetchone()[0],
                                       _refused(lambda: Search(sc, again).search("Atlas", limit=1)))
            seen[f"{tenant} audit"] = sorted(
                (e["hit_count"], e["excluded_audience"], e["excluded_speaker"], e["excluded_time"],
                 e["excluded_lineage"], e["excluded_in_context"], e["status"])
                for r in (run, again) for e in Auditor(oc).search_events(run=r))
            runs[_sha256(run)], runs[_sha256(again)] = f"{tenant} run", f"{tenant} again"
    with _auditor_login(dsn) as auditor:
        seen["the auditor's views"] = _auditor_views(auditor, runs)
    return seen


def _sha256(run: object) -> str:
    return hashlib.sha256(str(run).encode()).hexdigest()


@contextlib.contextmanager
def _auditor_login(dsn: str) -> Iterator[str]:
    """A LOGIN role that is a member of history_auditor, as deployments connect; its DSN."""
    name = f"auditor_{dsn.rsplit('/', 1)[1]}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE history_auditor").format(sql.Identifier(name)))
    try:
        yield psycopg.conninfo.make_conninfo(dsn, user=name)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def _auditor_views(login: str, runs: dict[str, str]) -> dict[str, object]:
    """The three views as ``login`` reads them, surrogate keys and clock readings left out, each run named by
    its label in ``runs`` (keyed by the token's SHA-256), scores to 3 places (recency is measured from now())."""
    with psycopg.connect(login, autocommit=True) as c:
        audit = [(runs[r[0]], *r[1:]) for r in c.execute(
            """SELECT run_token_sha256, tenant_id, agent_id, destination_conversation_id, requester_id,
                      searched_at IS NOT NULL, query_digest IS NOT NULL, digest_key_id, query_term_count, speaker,
                      sent_after, sent_before, effective_limit, hit_count, selected_count, hit_message_ids,
                      selected_message_ids, excluded_speaker, excluded_time, excluded_perspective,
                      excluded_audience, excluded_lineage, excluded_alive, excluded_in_context, excluded_budget,
                      candidates_capped, status, budget_used, budget_remaining
                 FROM history.search_audit""").fetchall()]
        messages = [(runs[r[0]], *r[1:]) for r in c.execute(
            """SELECT run_token_sha256, tenant_id, agent_id, position, message_id, conversation_id, sent_at, role,
                      hit_message_id, hit_rank, round(text_score::numeric, 3), round(coverage::numeric, 3),
                      round(actor::numeric, 3), round(conversation::numeric, 3),
                      round(participation::numeric, 3), round(recency::numeric, 3), round(total::numeric, 3)
                 FROM history.search_audit_messages""").fetchall()]
        # The search_audit row of each search_audit_messages row, by the keys the two views share.
        joined = c.execute(
            """SELECT count(*) FROM history.search_audit_messages m
                 JOIN history.search_audit a USING (search_event_id, run_key, run_token_sha256, tenant_id)""").fetchone()[0]
        status = c.execute(
            """SELECT release, open_runs, oldest_open_run_started_at IS NOT NULL, searches_last_day,
                      budget_exhausted_last_day, jsonb_array_length(searches_by_hour),
                      (SELECT sum((x->>'searches')::int) FROM jsonb_array_elements(searches_by_hour) x),
                      (SELECT sum((x->>'budget_exhausted')::int) FROM jsonb_array_elements(searches_by_hour) x),
                      oldest_search_at IS NOT NULL, reindex_running, reindex_started_at, reindex_rows_done,
                      reindex_percent
                 FROM history.status""").fetchall()
    return {"search_audit": sorted(audit, key=repr), "search_audit_messages": sorted(messages, key=repr),
            "joined": joined, "status": status}


def _writes(dsn: str) -> dict[str, object]:
    """The write surface and a run without a search, in two tenants holding the same ids: what callers and
    the owner see afterwards (never surrogate keys, which differ between databases)."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    seen: dict[str, object] = {}

    with _as(dsn, "history_runtime") as rc:
        def run_status(run) -> str:
            return rc.execute("SELECT history.run_status(%s)", (run,)).fetchone()[0]

        for tenant in ("t-one", "t-two"):
            rt = Runtime(rc, tenant=tenant)
            with rc.transaction():
                load_world(rt, w)
            rt.post_message(w.m("ask"), w.launch, w.alice, "@helper where do we stand on Atlas?", w.ago(minutes=9))
            run = rt.begin_run(w.agent, w.launch, w.alice, w.m("ask"))
            seen[f"{tenant} delivery"] = [(p.message_id, p.reason) for p in rt.check_delivery(run)]
            rt.record_reply(run, w.m("reply"), "On track.", w.ago(minutes=8))
            seen[f"{tenant} replied run"] = run_status(run)
            explicit = rt.begin_run(w.agent, w.launch, w.alice, w.m("ask"), audience=[w.alice, w.bob])
            rt.end_run(explicit)
            seen[f"{tenant} ended run"] = (run_status(explicit), _refused(lambda: rt.end_run(explicit)))
            rt.edit_message(w.m("ask"), "@helper where do we stand on the Atlas launch?", w.ago(minutes=7))
            rt.delete_message(w.m("reply"), w.ago(minutes=6))
            seen[f"{tenant} edit deleted"] = _refused(lambda: rt.edit_message(w.m("reply"), "again", w.ago(minutes=5)))
            rt.link_identity(w.m("proof-bob-carol"), w.bob, w.carol, w.ago(days=3))
            rt.revoke_proof(w.m("proof-alice-mail"), w.ago(days=2))
            rt.remove_member(w.leads, w.dave, w.ago(minutes=4))
            seen[f"{tenant} erased"] = rt.erase_account(w.carol, w.ago(minutes=3))
            seen[f"{tenant} again"] = _refused(lambda: rt.add_member(w.launch, w.alice, w.ago(days=1)))
    with psycopg.connect(dsn, autocommit=True) as c:  # the owner's view of what was written
        c.execute("CALL history.purge(now() + interval '1 minute')")
        seen["rows"] = c.execute(
            """SELECT t.tenant_id, m.message_id, e.event_kind, e.body IS NULL, d.message_key IS NOT NULL
                 FROM history.messages m JOIN history.tenants t USING (tenant_key)
                 JOIN history.message_events e ON e.message_key = m.message_key AND e.tenant_key = m.tenant_key
                 LEFT JOIN history.message_search_documents d
                        ON d.message_key = m.message_key AND d.tenant_key = m.tenant_key
                ORDER BY 1, 2, e.occurred_at, 3""").fetchall()
        seen["accounts"] = c.execute(
            """SELECT t.tenant_id, a.account_id, a.display_name, a.name_terms,
                      array_agg(p.account_id ORDER BY p.account_id)
                 FROM history.accounts a JOIN history.tenants t USING (tenant_key)
                 JOIN history.accounts p ON p.component_key = a.component_key AND p.tenant_key = a.tenant_key
                GROUP BY 1, 2, 3, 4 ORDER BY 1, 2""").fetchall()
        seen["memberships"] = c.execute(
            """SELECT t.tenant_id, c.conversation_id, a.account_id, m.since, m.until
                 FROM history.memberships m JOIN history.tenants t USING (tenant_key)
                 JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = m.tenant_key
                 JOIN history.accounts a ON a.account_key = m.account_key AND a.tenant_key = m.tenant_key
                ORDER BY 1, 2, 3, 4""").fetchall()
        seen["left after purge"] = c.execute(
            "SELECT (SELECT count(*) FROM history.runs), (SELECT count(*) FROM history.run_trace)").fetchone()
    return seen


def _single_node(play) -> dict[str, object]:
    with ThrowawayCluster() as single:
        with psycopg.connect(single.dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE hs_single")
        one = single.dsn_for("hs_single")
        apply_migrations(one)
        return play(one)


def test_the_write_surface_and_a_run_on_the_coordinator_do_what_one_node_does(distributed):
    """Every statement of these functions names the tenant (the distribution column): Citus runs each on
    one shard, and row locks, which it takes only there, work."""
    expected = _single_node(_writes)
    assert expected["t-one delivery"] == [] and expected["t-one erased"] > 0
    assert _writes(distributed) == expected


# The search's stages, one by one (history._search_history composes them), as a superuser: what the run
# may see (_run_scope), the query's languages and named people, the counting pass, the newest eligible
# matches, their neighbours, a hit's returned fields, the proofs it relies on and the delivery's lineage
# check. The ranking pass is left out: it does not run on Citus yet (docs/scale-out.md).
_STAGES = r"""
CREATE FUNCTION pg_temp.stages(p_run uuid, p_query text) RETURNS jsonb
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    v_tenant integer := (SELECT r.tenant_key FROM history.runs r WHERE r.run_token = p_run);
    v_run    history.runs;
    v_scope  history._search_scope;
    v_lang   regconfig[];
    v_terms  text[];
    v_query  tsquery;
    v_ranked history._ranked_candidate[];
    v_nb     history._hit_neighbours[];
    v_out    jsonb;
BEGIN
    SELECT * INTO v_run FROM history.runs r WHERE r.run_token = p_run AND r.tenant_key = v_tenant;
    v_scope := history._run_scope(v_run);
    v_lang := history._visible_languages(v_tenant, v_run.agent_key, v_scope.eligible_conversations,
                                         v_run.conversation_key);
    SELECT a.terms, a.query INTO v_terms, v_query FROM history._query_analysis(p_query, v_lang, 32) a;
    v_ranked := ARRAY(
        SELECT jsonb_populate_record(NULL::history._ranked_candidate, jsonb_build_object(
                   'message_key', n.message_key, 'message_id', n.message_id, 'conversation_key', n.conversation_key,
                   'author_key', n.author_key, 'sent_at', n.sent_at, 'visible', w.visible))
          FROM history._newest_matches(v_tenant, v_query, v_run.agent_key, v_scope.eligible_conversations,
                                       v_scope.eligible_windows, false, NULL, NULL, NULL, 10) n
          JOIN unnest(v_scope.eligible_conversations, v_scope.eligible_windows) w(conversation_key, visible)
            ON w.conversation_key = n.conversation_key
         ORDER BY n.sent_at DESC, n.message_id DESC);
    v_nb := history._hit_neighbours(v_tenant, v_ranked, v_scope.audience, v_scope.audience_conversations,
                                    v_scope.audience_windows, v_scope.context);
    -- One statement each: a statement on a distributed table must not call a function that reads one.
    v_out := jsonb_build_object(
        'languages', v_lang::text[],
        'names', (SELECT n.name_terms FROM history._query_names(
                      v_tenant, v_terms, v_scope.audience || v_scope.requester_accounts || v_run.agent_key, v_lang) n),
        'counts', to_jsonb(history._counting_pass(v_scope, v_query, 'anyone', NULL, NULL, 500)),
        'matches', (SELECT jsonb_agg(r.message_id) FROM unnest(v_ranked) r),
        'first', history._message_json(v_tenant, v_ranked[1].message_key, v_run.agent_key,
                                       v_scope.requester_accounts, 40),
        'proofs', cardinality(history._relied_proofs(v_tenant, v_ranked[1].message_key, v_scope.audience,
                                                     v_run.requester_key)),
        'lineage passes', history._lineage_passes(v_tenant, v_ranked[1].message_key, v_scope.audience));
    v_out := v_out || jsonb_build_object(
        'audience', (SELECT array_agg(a.account_id ORDER BY a.account_id) FROM history.accounts a
                      WHERE a.tenant_key = v_tenant AND a.account_key = ANY (v_scope.audience)));
    v_out := v_out || jsonb_build_object(
        'requester', (SELECT array_agg(a.account_id ORDER BY a.account_id) FROM history.accounts a
                       WHERE a.tenant_key = v_tenant AND a.account_key = ANY (v_scope.requester_accounts)));
    v_out := v_out || jsonb_build_object(
        'eligible', (SELECT jsonb_object_agg(c.conversation_id, w.visible::text) FROM history.conversations c
                       JOIN unnest(v_scope.eligible_conversations, v_scope.eligible_windows) w(k, visible)
                         ON w.k = c.conversation_key
                      WHERE c.tenant_key = v_tenant));
    v_out := v_out || '{"neighbours": []}';
    FOR i IN 1 .. coalesce(cardinality(v_nb), 0) LOOP
        v_out := jsonb_insert(v_out, ARRAY['neighbours', '-1'], jsonb_build_array(
            (SELECT array_agg(m.message_id ORDER BY m.sent_at) FROM history.messages m
              WHERE m.tenant_key = v_tenant AND m.message_key = ANY (v_nb[i].before)),
            (SELECT array_agg(m.message_id ORDER BY m.sent_at) FROM history.messages m
              WHERE m.tenant_key = v_tenant AND m.message_key = ANY (v_nb[i].after))), true);
    END LOOP;
    RETURN v_out;
END $$;
"""


def _stages(dsn: str) -> dict[str, object]:
    """The demo's world in two tenants holding the same ids (the second has one more matching message); the
    search's stages for a run in each."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    runs = {}
    with _as(dsn, "history_runtime") as rc:
        for tenant in ("t-one", "t-two"):
            rt = Runtime(rc, tenant=tenant)
            with rc.transaction():
                load_world(rt, w)
            # lineage: one drawn from the leads' channel the audience cannot read, one from the launch channel
            rt.post_message(w.m("drawn-leads"), w.launch, w.bob, "Recap of the Atlas security review, launch risk.",
                            w.ago(days=3, hours=5, minutes=50), sources=[w.m("leads-1")])
            rt.post_message(w.m("drawn-launch"), w.launch, w.bob, "Recap: the Atlas launch date is the 12th.",
                            w.ago(days=3, hours=5, minutes=40), sources=[w.m("launch-1")])
            if tenant == "t-two":
                rt.post_message(w.m("only-two"), w.launch, w.bob, "Atlas launch date: the 12th, confirmed.",
                                w.ago(minutes=30))
            rt.post_message(w.m("ask"), w.launch, w.alice, "@helper where do we stand on the Atlas launch date?",
                            w.ago(minutes=2))
            runs[tenant] = rt.begin_run(w.agent, w.launch, w.alice, w.m("ask"))
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(_STAGES)
        return {tenant: c.execute("SELECT pg_temp.stages(%s, 'Atlas launch date')", (run,)).fetchone()[0]
                for tenant, run in runs.items()}


def test_the_search_stages_on_the_coordinator_see_what_one_node_sees(distributed):
    """Each stage names the run's tenant in every statement: on Citus each runs on the tenant's shard, and a
    run of one tenant never sees the other's rows, though both hold the same ids."""
    expected = _single_node(_stages)
    one, two = expected["t-one"], expected["t-two"]
    assert one["matches"] and one["audience"] and one["eligible"]
    assert [m for m in two["matches"] if m not in one["matches"]] == ["acme:only-two"]
    assert any(before or after for before, after in one["neighbours"])
    # the message drawn from the leads' channel is never a neighbour; the one drawn from the launch channel is
    neighbours = {m for pair in one["neighbours"] for side in pair for m in side or ()}
    assert "acme:drawn-launch" in set(one["matches"]) | neighbours
    assert "acme:drawn-leads" not in neighbours
    assert _stages(distributed) == expected


# The search's stages run on the coordinator (above) but for the ranking pass: Citus routes its one
# statement to the tenant's worker with the _newest_matches(...) call it holds, and a function that
# reads a distributed table is refused there (docs/scale-out.md, "The search on Citus").
def test_a_turn_on_the_coordinator_sees_what_one_node_sees(distributed):
    expected = _single_node(_turn)
    one, two = expected["t-one hits"], expected["t-two hits"]
    assert one[0] and any(before or after for _, _, before, after in one[0]), "hits, with neighbours"
    assert [h[0] for h in two[0] if h[0] not in {x[0] for x in one[0]}] == ["acme:only-two"]
    assert expected["t-one after delete"] and expected["t-one reply refused"]
    views = expected["the auditor's views"]
    assert {r[0] for r in views["search_audit"]} == {f"{t} {r}" for t in ("t-one", "t-two") for r in ("run", "again")}
    assert views["search_audit_messages"] and views["joined"] == len(views["search_audit_messages"])
    assert views["status"][0][3] == len(views["search_audit"]), "searches of the last day"
    assert _turn(distributed) == expected


@pytest.mark.parametrize(
    "isolation", [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ],
    ids=["read-committed", "repeatable-read"])
def test_concurrent_searches_on_the_coordinator_keep_the_budget_exact(distributed, isolation):
    # The run row's lock is a single-shard FOR UPDATE on the tenant's worker: two sessions racing one run
    # end at exactly the budget there too, every search that returned audited.
    from tests.test_search_concurrency import exhaust_the_budget_from_two_sessions
    exhaust_the_budget_from_two_sessions(distributed, isolation)


def test_the_differential_model_holds_on_the_coordinator(distributed):
    """The spec's executable model (tests/test_differential.py) against a distributed database, step by
    step: its hand-written scenarios (a lineage leak, linked accounts widening a direct conversation, the
    delivery rechecks, a reply's send time, an outsider in the audience, two tenants sharing ids, an ended
    run) and random worlds of the search, delivery and the budget, each compared with the model at every
    search, check and reply, as on one node."""
    from hypothesis import HealthCheck, given, settings
    from tests import test_differential as diff

    side = diff.SqlSide(distributed)
    try:
        for scenario in (diff.LINEAGE_LEAK, diff.ENDED_AND_BAD_LIMIT, diff.AUDIENCE_OUTSIDER, diff.TENANT_OVERLAP,
                         diff.DIRECT_LINKS, diff.DELIVERY_RECHECK, diff.REPLY_SENT_AT):
            diff.run_scenario(side, scenario)
        worlds: list[str] = []
        # Fewer worlds than one node's job (each costs a second or two here); derandomized, so a failure repeats.
        for strategy, count in ((diff.scenarios(), 30), (diff.budget_scenarios(), 3)):
            @settings(max_examples=count, derandomize=True, database=None, deadline=None,
                      suppress_health_check=list(HealthCheck))
            @given(scenario=strategy)
            def matches_model(scenario):
                worlds.append(scenario.weights)
                diff.run_scenario(side, scenario)
            matches_model()
        assert len(worlds) == 33
    finally:
        side.close()


def test_reindex_runs_on_the_coordinator_tenant_by_tenant(distributed):
    """history-search reindex on a distributed database: every batch names its tenant (one tenant's
    shards), and it rebuilds the rows of every tenant."""
    from history_search.cli import main

    at = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
    with _as(distributed, "history_runtime") as rc:
        for tenant in ("t-one", "t-two"):
            rt = Runtime(rc, tenant=tenant)
            rt.upsert_account("ann", "person")
            rt.upsert_conversation("team", "group")
            rt.add_member("team", "ann", at)
            for i in range(5):
                rt.post_message(f"m{i}", "team", "ann", f"ticket PROJ-{4800 + i} about the houses", at)
    with psycopg.connect(distributed, autocommit=True) as conn:
        conn.execute("UPDATE history.message_search_documents SET document = to_tsvector('simple', 'stale') "
                     "WHERE message_id IN ('m1', 'm3')")
        assert main(["reindex", "--dsn", distributed, "--batch-size", "2"]) == 0
        assert conn.execute("SELECT count(*) FROM history.message_search_documents d "
                            "JOIN history.messages m ON m.message_key = d.message_key AND m.tenant_key = d.tenant_key "
                            "JOIN history.message_events e ON e.event_key = m.current_event_key "
                            " AND e.tenant_key = m.tenant_key "
                            "WHERE d.document = history._document_vector(e.body, 'english')").fetchone() == (10,)
        assert conn.execute("SELECT rows_done, rows_changed, finished_at IS NOT NULL "
                            "FROM history.reindex_progress").fetchone() == (10, 4, True)

        # The status an auditor reads measures a re-index against the rows in the shards, not against
        # the coordinator's empty shell (whose estimate is 0: a re-index read 100% after one batch).
        conn.execute("VACUUM ANALYZE history.message_search_documents")
        documents = conn.execute("SELECT count(*) FROM history.message_search_documents").fetchone()[0]
        conn.execute("UPDATE history.reindex_progress SET finished_at = NULL, rows_done = 5")
        try:
            with _auditor_login(distributed) as login, psycopg.connect(login, autocommit=True) as auditor:
                assert auditor.execute(
                    "SELECT search_documents_estimate, reindex_running, reindex_percent FROM history.status"
                ).fetchone() == (documents, True, (Decimal(500) / documents).quantize(Decimal('0.1'), ROUND_HALF_UP))
        finally:
            conn.execute("UPDATE history.reindex_progress SET finished_at = now(), rows_done = 10")


# -- upgrades -------------------------------------------------------------------

#: The releases whose databases could be distributed (`history-search distribute` came with 0.3.0).
DISTRIBUTABLE_RELEASES = [t for t in RELEASES if tuple(map(int, t[1:].split("."))) >= (0, 3, 0)]


@pytest.mark.parametrize("tag", DISTRIBUTABLE_RELEASES)
def test_a_distributed_database_of_a_release_upgrades(tag, citus, citus_db, tmp_path):
    """A database that a release migrated and distributed, holding a world, upgrades by today's migrate
    and distribute: the schema of a fresh distributed install, every row kept, the workers running
    today's functions, and the world found as before. Citus refuses some released scripts on tables it
    distributes; db/citus/ holds what runs instead (history_search.migrations.CITUS_DIR)."""
    tree = checkout(release_commit(tag), tmp_path / tag)
    for step in ("migrate", "distribute"):
        done = as_release(tree, step, "--dsn", citus_db)
        assert done.returncode == 0, f"{tag} {step}: {done.stderr}"
    try:
        before = write_world(citus_db)
    except psycopg.errors.FeatureNotSupported:
        # 0.3.0's search could not run on Citus at all ("could not create distributed plan"): its
        # world is written, the search is what the upgrade makes work.
        assert tag == "v0.3.0"
        before = {"run": None, "hits": ["m1", "m2"]}
    counts = table_counts(citus_db)

    applied = apply_migrations(citus_db)
    assert applied == [c.id for c in PLAN.changes[PLAN.tags[tag]:]]
    waiting = check_database(citus_db)
    assert all(p.endswith(": run history-search distribute (after every migrate on Citus)") for p in waiting.problems), \
        waiting.problems
    layout = distribute(citus_db)
    assert len(waiting.problems) == len(layout.changed), "check named, one line each, what distribute then did"
    assert layout.changed or not applied

    coordinator, workers = _definitions_on_nodes(citus_db)
    assert all(worker == coordinator for worker in workers), "every node runs today's functions"
    with psycopg.connect(citus_db, autocommit=True) as c:
        assert not c.execute("SELECT count(*) FROM pg_dist_partition p JOIN pg_class k ON k.oid = p.logicalrelid"
                             " WHERE k.relnamespace = 'history'::regnamespace"
                             "   AND NOT (p.partmethod = 'h' OR p.repmodel = 't')").fetchone()[0], \
            "no table left a Citus local table"
    fresh_name = f"hs_citus_fresh_{next(_names)}"
    fresh = citus.create_database(fresh_name)
    try:
        apply_migrations(fresh)
        distribute(fresh)
        assert schema_dump(citus_db) == schema_dump(fresh)
    finally:
        citus.drop_database(fresh_name)

    after = table_counts(citus_db)
    assert {t: after.get(t) for t in counts} == counts, "rows lost or added by the upgrade"
    with psycopg.connect(citus_db, autocommit=True) as c:
        run = c.execute("SELECT history.begin_run('bot', 'team', 'alice', 'm4')").fetchone()[0]
        assert sorted(h["message_id"] for h in call_search(c, run, "zeppelin")["hits"]) == before["hits"]
        assert c.execute("SELECT history.schema_release()").fetchone() == (history_search.__version__,)
        with pytest.raises(psycopg.errors.CheckViolation):  # a constraint a Citus-only script added
            c.execute("UPDATE history.search_settings SET window_coverage_weight = -1")
    again = distribute(citus_db)
    assert again.changed == [], "distribute after the upgrade's distribute changes nothing"
    health = check_database(citus_db)
    assert health.ok, health.lines()


def test_a_tenant_moved_to_the_other_worker_is_searched_and_written_there(citus, distributed):
    """A shard move (as a rebalance after adding a node makes): the tenant's co-located shards go to the
    other worker, and its searches and writes, delegated by the placement, follow them; the moved-from
    copies Citus leaves until its cleanup are not read (what the search finds is what was written)."""
    with psycopg.connect(distributed, autocommit=True) as c:
        for account, kind in (("bot", "agent"), ("alice", "person"), ("bob", "person")):
            c.execute("SELECT history.upsert_account(%s, %s, %s, 'acme')", (account, kind, account.title()))
        c.execute("SELECT history.upsert_conversation('team', 'group', 'Team', NULL, 'acme')")
        for account in ("bot", "alice", "bob"):
            c.execute("SELECT history.add_member('team', %s, '2026-01-01', 'acme')", (account,))
        c.execute("SELECT history.post_message('m1', 'team', 'alice', 'zeppelin launch in June', '2026-02-01', "
                  "'{}', 'acme')")
        c.execute("SELECT history.post_message('m4', 'team', 'alice', '@bot when?', '2026-02-02', '{}', 'acme')")

        def found() -> list[str]:
            run = c.execute("SELECT history.begin_run('bot', 'team', 'alice', 'm4', '{}', '{}', 'acme')").fetchone()[0]
            return sorted(h["message_id"] for h in call_search(c, run, "zeppelin")["hits"])

        def placement() -> tuple[int, str, int]:
            return c.execute(
                """SELECT p.shardid, p.nodename, p.nodeport FROM pg_dist_shard_placement p
                    WHERE p.shardid = get_shard_id_for_distribution_column('history.messages',
                              (SELECT tenant_key FROM history.tenants WHERE tenant_id = 'acme'))""").fetchone()

        assert found() == ["m1"]
        shard, host, port = placement()
        (target,) = [w for w in citus.workers if w.port != port]
        c.execute("SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'block_writes')",
                  (shard, host, port, target.host, target.port))
        assert placement()[2] == target.port
        assert found() == ["m1"]
        c.execute("SELECT history.post_message('m5', 'team', 'bob', 'zeppelin budget', '2026-02-03', '{}', 'acme')")
        assert found() == ["m1", "m5"]
        # Identity keys drawn on two nodes: Citus gives each node's sequence its own range (the node's
        # group id in the top 16 bits), so the two keys cannot collide.
        groups = c.execute("SELECT message_key >> 48 FROM history.messages WHERE message_id IN ('m1', 'm5') "
                           "ORDER BY message_id").fetchall()
        assert len(set(groups)) == 2 and all(g > 0 for (g,) in groups), groups
        c.execute("CALL citus_cleanup_orphaned_resources()")
        assert found() == ["m1", "m5"]
    assert distribute(distributed).changed == [], "a move leaves nothing for distribute to do"


def test_identity_writers_on_two_nodes_queue_on_one_write_lock(citus, distributed):
    """link_identity and revoke_proof serialise on a row of the reference table history.write_locks (not a
    node-local advisory lock): a link held open on the coordinator makes the same lock wait on a worker,
    and the other way round, so writers connected to different nodes cannot interleave. (Citus takes a
    reference table's row lock on its placements through its own connections, so the wait shows on whichever
    node holds the placement, and the waiting session's lock_timeout does not apply to it.)"""
    name = distributed.rsplit("/", 1)[1]
    lock = "SELECT 1 FROM history.write_locks WHERE lock_name = 'identity_proofs' FOR UPDATE"
    with psycopg.connect(distributed, autocommit=True) as c:
        for account in ("alice", "alice2"):
            c.execute("SELECT history.upsert_account(%s, 'person', %s, 'acme')", (account, account.title()))

    def lock_waits() -> int:
        """Backends of this database waiting for a lock, on all nodes (the wait may be on any placement)."""
        return sum(c.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                             (name,)).fetchone()[0] for c in observers)

    def waits(holder: str, hold: str, other: str) -> None:
        with psycopg.connect(holder) as a, psycopg.connect(other, autocommit=True) as b:
            a.execute(hold)  # the transaction stays open: the lock is held
            thread, box = run_in_thread(lambda: b.execute(lock).fetchone())
            for _ in range(200):
                if lock_waits():
                    break
                time.sleep(0.02)
            else:
                pytest.fail("the other node's writer never waited for the lock")
            assert thread.is_alive() and not box, "it is still waiting"
            a.commit()
            thread.join(30)
            assert box == {"value": (1,)}, "it gets the lock once the holder commits"

    coordinator, worker = citus.coordinator.dsn_for(name), citus.workers[0].dsn_for(name)
    with contextlib.ExitStack() as stack:
        observers = [stack.enter_context(psycopg.connect(node.dsn_for(name), autocommit=True))
                     for node in citus.nodes]
        waits(coordinator, "SELECT history.link_identity('p1', 'alice', 'alice2', '2026-01-01', 'acme')", worker)
        waits(worker, lock, coordinator)
    with psycopg.connect(distributed) as c:
        assert c.execute("SELECT count(*) FROM history.identity_proofs").fetchone() == (1,)


def _definitions_on_nodes(dsn: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    from history_search.distribute import _definitions

    with psycopg.connect(dsn, autocommit=True) as c:
        return _definitions(c)


def test_definer_functions_reach_the_shards_as_the_owner(citus, distributed):
    """A SECURITY DEFINER function runs as history_owner, and Citus reaches the workers' shards as the
    current role: it works because distribute let the owner log in on the workers, and fails without it
    (as after citus_add_node) until distribute runs again."""
    def run_status() -> str:
        with psycopg.connect(distributed, autocommit=True) as c:
            c.execute("SET ROLE history_runtime")
            with pytest.raises(psycopg.Error) as raised:  # a multi-shard read of history.runs by token
                c.execute("SELECT history.run_status('00000000-0000-0000-0000-000000000000')")
            return str(raised.value)

    assert "unknown run" in run_status()
    with psycopg.connect(distributed, autocommit=True) as c:
        c.execute("SELECT run_command_on_workers('SET citus.enable_ddl_propagation = off; "
                  "ALTER ROLE history_owner NOLOGIN')")
    assert 'role "history_owner" is not permitted to log in' in run_status()
    proc = _cli("distribute", "--dsn", distributed)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "distributed: role history_owner: LOGIN on the workers"
    assert "unknown run" in run_status()


# -- ingest and the bench on Citus ---------------------------------------------------


def _remote_commands(conn: psycopg.Connection, statement: str, params: tuple = ()) -> list[tuple[str, str]]:
    """(command, server) of each command the coordinator sends to a worker for ``statement``."""
    seen: list[tuple[str, str]] = []

    def notice(d: psycopg.errors.Diagnostic) -> None:
        if (d.message_primary or "").startswith("issuing "):
            seen.append((d.message_primary[len("issuing "):], (d.message_detail or "").split(" connectionId")[0]))
    conn.add_notice_handler(notice)
    conn.execute("SET citus.log_remote_commands = on")
    conn.execute("SET client_min_messages = log")
    conn.execute(statement, params)
    conn.execute("RESET client_min_messages")
    conn.execute("RESET citus.log_remote_commands")
    conn.remove_notice_handler(notice)
    return seen


@contextlib.contextmanager
def _owner_statements_logged(citus: ThrowawayCitusCluster, distributed: str) -> Iterator[list[str]]:
    """Each worker's log of what the owner's connections run while the block runs: the commands they
    receive, top level only, and the statements Citus executes on a shard in the worker's process
    (its local execution). Not propagated: a setting of this test's workers alone, read by the new
    connections a new coordinator session opens."""
    database = distributed.rsplit("/", 1)[1]

    def set_log_statement(value: str) -> None:
        for node in citus.workers:
            with psycopg.connect(node.dsn_for(database), autocommit=True) as c:
                c.execute("SET citus.enable_ddl_propagation = off")
                c.execute(f"ALTER ROLE history_owner {value}")

    set_log_statement("SET log_statement = 'all'")
    logs: list[str] = []
    try:
        start = [node.log_file.stat().st_size for node in citus.workers]
        yield logs
        logs.extend(node.log_file.read_bytes()[size:].decode(errors="replace")
                    for node, size in zip(citus.workers, start))
    finally:
        set_log_statement("RESET log_statement")


def _logged_statements(log: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"LOG:  (?:statement|execute [^:]*): (.*)", log)]


def test_post_message_is_one_call_on_the_tenants_worker(citus, distributed):
    """Ingest on Citus: post_message sends the tenant's worker one call (delegated), in a one-phase
    transaction, and nothing to the other worker. There its read of every lookup and check is one
    statement on the tenant's shards, planned once; only its three writes go through Citus, which
    runs them on the shards in the worker's process (docs/scale-out.md, "Ingest")."""
    with psycopg.connect(distributed, autocommit=True) as conn:
        conn.execute("SELECT history.upsert_account('p1', 'person', 'P One', 'acme')")
        conn.execute("SELECT history.upsert_conversation('c1', 'group', 'C one', NULL, 'acme')")
        conn.execute("SELECT history.add_member('c1', 'p1', '2026-01-01', 'acme')")
        conn.execute("SELECT history.post_message('m0', 'c1', 'p1', 'first words', '2026-02-01', '{}', 'acme')")
        sent = _remote_commands(conn, "SELECT history.post_message('m1', 'c1', 'p1', 'launch review at noon', "
                                      "'2026-02-02', '{}', 'acme')")
        assert [c.split()[0] for c, _ in sent] == ["BEGIN", "SELECT", "COMMIT"], sent
        assert "history._post_message_in_tenant(" in sent[1][0], sent
        assert len({server for _, server in sent}) == 1, sent  # the tenant's worker, no two-phase commit
        # A repeat is the same one call, and changes nothing.
        assert [c.split()[0] for c, _ in _remote_commands(
            conn, "SELECT history.post_message('m1', 'c1', 'p1', 'launch review at noon', '2026-02-02', '{}', 'acme')")
        ] == ["BEGIN", "SELECT", "COMMIT"]
        with _owner_statements_logged(citus, distributed) as logs:
            with psycopg.connect(distributed, autocommit=True) as fresh:
                fresh.execute("SELECT history.post_message('m2', 'c1', 'p1', 'launch review at one', "
                              "'2026-02-03', '{}', 'acme')")
        row = conn.execute(
            """SELECT d.has_lineage, d.document = history._document_vector('launch review at noon', 'english'),
                      m.current_event_key = e.event_key
                 FROM history.messages m
                 JOIN history.message_events e ON e.message_key = m.message_key AND e.tenant_key = m.tenant_key
                 JOIN history.message_search_documents d ON d.message_key = m.message_key AND d.tenant_key = m.tenant_key
                WHERE m.message_id = 'm1' AND m.tenant_key = (SELECT tenant_key FROM history.tenants
                                                               WHERE tenant_id = 'acme')""").fetchone()
        assert row == (False, True, True)
        assert conn.execute("SELECT count(*) FROM history.messages WHERE message_id = 'm2'").fetchone() == (1,)
    # On the tenant's worker: the call, and Citus' local execution of the three writes on the tenant's
    # shards; no statement of Citus' reads a shard of a distributed table (the read went to them directly).
    on_shards = [[re.sub(r"^(\w+)(?: INTO)? history\.(\w+?)_\d{6}\b.*", r"\1 \2", t, flags=re.S)
                  for t in _logged_statements(log) if re.search(r"history\.\w+_\d{6}\b", t)]
                 for log in logs]
    writes = ["INSERT messages", "INSERT message_events", "INSERT message_search_documents"]
    tenants_worker = [i for i, log in enumerate(logs) if "_post_message_in_tenant(" in log]
    assert len(tenants_worker) == 1, logs
    assert [t for t in on_shards[tenants_worker[0]] if not t.startswith("SELECT (SELECT s.max_body_bytes")] == writes, logs
    assert _logged_statements(logs[1 - tenants_worker[0]]) == [], logs


def test_a_reply_is_one_call_on_its_tenants_worker(distributed):
    """record_reply on Citus: the delivery check, the reply with its sources and lineage, and the run's
    end are one call delegated to the tenant's worker (a two-phase commit on nothing, no statement sent
    for each evidence row); a reply whose evidence no longer passes is refused there with HS005, and
    nothing of it is kept (docs/scale-out.md, "The reply on Citus")."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    count_reply = """SELECT count(*) FROM history.messages m JOIN history.tenants t USING (tenant_key)
                      WHERE t.tenant_id = 't-reply' AND m.message_id = %s"""
    with _as(distributed, "history_runtime") as rc, _as(distributed, "history_searcher") as sc, \
            psycopg.connect(distributed, autocommit=True) as oc:
        rt = Runtime(rc, tenant="t-reply")
        with rc.transaction():
            load_world(rt, w)
        rt.post_message(w.m("ask"), w.launch, w.alice, "@helper when is the Atlas launch date?", w.ago(minutes=2))
        run = rt.begin_run(w.agent, w.launch, w.alice, w.m("ask"))
        evidence = Search(sc, run).search("Atlas launch date", limit=5)
        assert evidence.budget_used > 5  # hits and neighbours: the reply's sources
        sent = _remote_commands(rc, "SELECT history.record_reply(%s, %s, %s, %s)",
                                (run, w.m("ask-reply"), "The 12th.", w.ago(minutes=1)))
        assert [c.split()[0] for c, _ in sent] == ["BEGIN", "SELECT", "COMMIT"], sent
        assert "history._record_reply_in_tenant(" in sent[1][0], sent
        assert len({server for _, server in sent}) == 1, sent
        assert rc.execute("SELECT history.run_status(%s)", (run,)).fetchone()[0] == "ended"
        assert oc.execute(
            """SELECT count(*) FROM history.message_sources s
                 JOIN history.messages m ON m.message_key = s.message_key AND m.tenant_key = s.tenant_key
                 JOIN history.tenants t ON t.tenant_key = m.tenant_key
                WHERE t.tenant_id = 't-reply' AND m.message_id = %s""", (w.m("ask-reply"),)
        ).fetchone() == (evidence.budget_used,)

        again = rt.begin_run(w.agent, w.launch, w.alice, w.m("ask"))
        first = Search(sc, again).search("Atlas launch date", limit=3)
        rt.delete_message(first.hits[0].message_id, w.ago(minutes=0.5))
        with pytest.raises(HistorySearchError) as refused:
            rt.record_reply(again, w.m("ask-reply-2"), "Still the 12th.", w.ago(minutes=0.4))
        assert refused.value.sqlstate == "HS005", refused.value
        assert f"{first.hits[0].message_id} (deleted)" in str(refused.value), refused.value
        assert oc.execute(count_reply, (w.m("ask-reply-2"),)).fetchone() == (0,)
        assert rc.execute("SELECT history.run_status(%s)", (again,)).fetchone()[0] == "open"


def test_a_search_is_one_call_on_its_tenants_worker_and_one_for_its_reveal(citus, distributed):
    """Delegation: for a search the coordinator sends the tenant's worker the search in one call and,
    after its commit, the reveal in another; every statement of the search runs there, on the
    tenant's shards, and nothing goes to the other worker (docs/scale-out.md, "The search on Citus")."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    with _as(distributed, "history_runtime") as rc, _as(distributed, "history_searcher") as sc:
        rt = Runtime(rc, tenant="t-one")
        with rc.transaction():
            load_world(rt, w)
        rt.post_message(w.m("launch-7"), w.launch, w.alice, "@helper where do we stand on the Atlas launch date?",
                        w.ago(minutes=2))
        run = rt.begin_run(w.agent, w.launch, w.alice, w.m("launch-7"))
        Search(sc, run).search("Atlas", limit=1)  # the session's connections to the workers, opened
        with _owner_statements_logged(citus, distributed) as logs:
            with _as(distributed, "history_searcher") as fresh:  # new connections, which read the setting
                result = Search(fresh, run).search("Atlas launch date", limit=5)
    assert result.hits

    def command(text: str) -> str:  # BEGIN, COMMIT, the function a SELECT calls, or the text
        called = re.match(r"SELECT .*? FROM history\.(\w+)\(", text)
        return called.group(1) if called else text.split()[0] if text.split()[0] in ("BEGIN", "COMMIT") else text
    # A statement on a shard (history.messages_102008 …) is the worker running the search's own statements
    # in its process (Citus logs its local execution too): no command was sent for it.
    commands = [[command(t) for t in _logged_statements(log) if not re.search(r"history\.\w+_\d{6}\b", t)]
                for log in logs]
    # A reveal that found WAL others inserted on the worker since the search's commit, not yet flushed,
    # defers: the procedure commits and calls it again (docs/decisions.md, "Audit before reveal").
    one_call_each = ["BEGIN", "_search_in_tenant", "COMMIT", "BEGIN", "_reveal_in_tenant", "COMMIT"]
    assert sorted(commands, key=len) in ([[], one_call_each],
                                         [[], one_call_each + ["BEGIN", "_reveal_in_tenant", "COMMIT"]]), logs


def test_every_candidate_strategy_runs_in_a_call_delegated_to_the_tenants_worker(distributed):
    """In a delegated search every statement runs on the tenant's shards, where Citus executes it in
    the worker's own process (its whole-row values are then of the shard's row type, and an EXPLAIN
    turns that execution off): each of _newest_matches' strategies, forced, returns there what the
    others return (test_newest_matches.sql proves them equal on one node)."""
    w = World("acme", datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc))
    with _as(distributed, "history_runtime") as rc:
        rt = Runtime(rc, tenant="t-one")
        with rc.transaction():
            load_world(rt, w)
    with psycopg.connect(distributed, autocommit=True) as c:
        tenant, agent = c.execute(
            """SELECT t.tenant_key, a.account_key FROM history.tenants t
                 JOIN history.accounts a ON a.tenant_key = t.tenant_key AND a.account_id = %s
                WHERE t.tenant_id = 't-one'""", (w.agent,)).fetchone()
        conversations = [k for (k,) in c.execute(
            "SELECT conversation_key FROM history.conversations WHERE tenant_key = %s ORDER BY 1", (tenant,))]
        # A probe delegated as the search is: the matches' ids and the port of the server it ran on.
        c.execute("SET ROLE history_owner")
        c.execute("""CREATE FUNCTION history.probe_matches_in_tenant(p_tenant integer, p_agent bigint,
                                                               p_conversations bigint[], p_strategy text)
                     RETURNS text LANGUAGE plpgsql AS $$
                     BEGIN
                         RETURN pg_catalog.inet_server_port() || ' ' || (
                             SELECT pg_catalog.string_agg(n.message_id, ',' ORDER BY n.sent_at DESC, n.message_id DESC)
                               FROM history._newest_matches(p_tenant, pg_catalog.to_tsquery('simple', 'atlas | launch'),
                                                            p_agent, p_conversations, NULL, true, NULL, NULL, NULL,
                                                            6, p_strategy) n);
                     END $$""")
        c.execute("RESET ROLE")
        c.execute("""SELECT create_distributed_function(
                         'history.probe_matches_in_tenant(integer, bigint, bigint[], text)', 'p_tenant',
                         colocate_with => 'history.conversations', force_delegation => true)""")
        found = {}
        for strategy in ("text", "walk", "probe", "slice", "slice:and", "slice:filter", "slice:listed", "slice:weeks"):
            with c.transaction():  # in a transaction, as the search's call is
                found[strategy] = c.execute(
                    sql.SQL("SELECT * FROM history.probe_matches_in_tenant({}, {}, %s, %s)").format(
                        sql.Literal(tenant), sql.Literal(agent)), (conversations, strategy)).fetchone()[0]
        coordinator_port = c.execute("SELECT inet_server_port()").fetchone()[0]
    ports = {v.split()[0] for v in found.values()}
    assert len(ports) == 1 and str(coordinator_port) not in ports, found  # on one worker, not here
    assert len({v.split()[1] for v in found.values()}) == 1 and "acme:" in next(iter(found.values())), found


def test_bench_loader_fills_tenants_that_distribute_spreads_over_both_workers(citus, migrated):
    """The bench's bulk load on a coordinator before ``distribute`` (local tables, one
    world per tenant), then ``distribute`` copies the rows into the shards; ingest then
    posts through post_message into every tenant."""
    from history_search.bench import corpus, runner

    world = corpus.build_world(2000 // 3, seed=2)
    load = corpus.load(migrated, world, out=None, tenants=3)
    assert load["messages"] == 3 * (2000 // 3) and load["tenants"] == 3
    layout = runner.distribute_loaded(migrated)
    assert len(layout["tenants_per_node"]) == 2 and sum(layout["tenants_per_node"].values()) == 3, layout
    with psycopg.connect(migrated, autocommit=True) as conn:
        # distribute left no copy of the rows in the coordinator's own tables.
        assert conn.execute("SELECT pg_relation_size('history.message_events')").fetchone()[0] == 0
        ids = dict(conn.execute("SELECT tenant_key, tenant_id FROM history.tenants").fetchall())
        per_tenant = conn.execute("SELECT tenant_key, count(*) FROM history.messages GROUP BY 1").fetchall()
        assert {ids[k]: n for k, n in per_tenant} == {"tenant-001": 666, "tenant-002": 666, "tenant-003": 666}
        # The rows are in the shards, on both workers.
        on_workers = dict(conn.execute(
            """SELECT s.nodeport, sum(r.result::bigint) FROM run_command_on_shards(
                      'history.messages', 'SELECT count(*) FROM %s') r
                 JOIN citus_shards s ON s.shardid = r.shardid GROUP BY 1""").fetchall())
        assert sorted(on_workers) == sorted(w.port for w in citus.workers), on_workers
        assert all(n > 0 for n in on_workers.values()) and sum(on_workers.values()) == 1998, on_workers
    ingest = runner.ingest_burst(migrated, 2, 1.0, 200, seed=2)
    assert ingest["messages"] > 0 and ingest["messages_per_s"] > 0
    with psycopg.connect(migrated, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM history.messages").fetchone()[0] == 1998 + ingest["messages"]


def test_bench_on_citus_produces_every_figure(tmp_path):
    from history_search.bench import runner

    rc = runner.main(["--citus", "--messages", "2000", "--tenants", "3", "--seed", "3", "--out", str(tmp_path),
                      "--concurrency", "1,8", "--duration-s", "0.3", "--min-queries", "10", "--queries", "40",
                      "--ingest-s", "0.5", "--quiet"])
    assert rc == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["citus"] and results["corpus"]["messages"] == 1998
    assert len(results["distribute"]["tenants_per_node"]) == 2
    assert len({t["node"] for t in results["searched_tenants"]}) == 2
    cells = {(c["shape"], c["concurrency"]): c for c in results["cells"]}
    assert set(cells) == {("F", 1), ("F", 8)}
    for cell in cells.values():
        assert all(isinstance(cell["mix"][k], float) for k in ("p50_ms", "p95_ms", "p99_ms")), cell
    assert results["ingest"]["messages_per_s"] > 0
    assert results["search_round_trips"]["statements_per_search"] > 0, results["search_round_trips"]
