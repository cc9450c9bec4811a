"""CI-sized smoke run of ``history-search bench``: every figure is produced.

No timing is asserted: only that each shape, class, concurrency level, ratio,
ingest figure and size is present and numeric, that the bulk-loaded world is
consistent, and that the last printed line is the summary in its fixed form.
"""

import collections
import io
import json
import math
import random
import re

import psycopg
import pytest

from history_search.bench import corpus, runner

from tests.harness import call_search

SUMMARY = re.compile(
    r"^summary: F/B1 p50=\d+\.\d\dx p99=\d+\.\d\dx F/P1 p50=\d+\.\d\dx F p95=\d+\.\dms$")


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def test_world_is_deterministic():
    a = corpus.build_world(3000, seed=7, anchor=1.7e9)
    b = corpus.build_world(3000, seed=7, anchor=1.7e9)
    assert a.accounts == b.accounts and a.stats == b.stats
    assert [c.members for c in a.conversations] == [c.members for c in b.conversations]
    pa, pb = corpus.plan_messages(a), corpus.plan_messages(b)
    assert pa.sent == pb.sent and pa.sources == pb.sources and pa.deleted == pb.deleted
    assert max(pa.sent) < a.anchor


def test_chunked_bodies_are_one_sequential_generators():
    """The bulk load's workers, each starting a chunk from a recorded state,
    write the bodies one generator writes in a single pass over all messages."""
    world = corpus.build_world(3000, seed=7, anchor=1.7e9)
    plan = corpus.plan_messages(world)
    n = len(plan.sent)
    assert plan.edited and plan.deleted
    rows = corpus._MessageRows(plan, world.vocabulary, [float(r + 1) for r in range(len(world.vocabulary))],
                               (4, 24), {})

    chunk = 250
    with corpus._RowWorkers(rows, 1) as inline:
        (whole,) = inline.imap(corpus._event_block, [(0, n, random.Random("bodies").getstate())])
    with corpus._RowWorkers(rows, 2) as pool:
        states = pool.start(corpus._chunk_states, ("bodies", chunk))()
        assert len(states) == math.ceil(n / chunk)
        tasks = [(start, min(start + chunk, n), state) for start, state in zip(range(0, n, chunk), states)]
        parts = list(pool.imap(corpus._event_block, tasks))
    assert "".join(p[0] for p in parts) == whole[0]
    assert sum(p[1] for p in parts) == n
    edit_bodies, live_words = {}, collections.Counter()
    for p in parts:
        edit_bodies.update(p[2])
        live_words.update(p[3])
    assert edit_bodies == whole[2] and set(edit_bodies) == set(plan.edited)
    assert list(live_words.items()) == list(whole[3].items())  # counts and first-seen order


def test_percentile():
    assert runner.percentile([], 50) is None
    assert runner.percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert runner.percentile(list(map(float, range(1, 101))), 99) == 99.0


def test_bench_smoke(db_dsn, tmp_path, capsys):
    rc = runner.main(["--messages", "3000", "--dsn", db_dsn, "--seed", "3", "--out", str(tmp_path),
                      "--concurrency", "1,2", "--duration-s", "0.2", "--min-queries", "12",
                      "--queries", "40", "--ingest-s", "0.3", "--quiet"])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert SUMMARY.match(lines[-1]), lines[-1]

    results = json.loads((tmp_path / "results.json").read_text())
    assert results["summary"] == lines[-1]
    load = results["bulk_load"]
    assert load["messages"] == 3000 and load["deleted"] >= 0 and _number(load["seconds"]["total"])
    assert results["corpus"]["messages"] == 3000

    cells = {(c["shape"], c["concurrency"]): c for c in results["cells"]}
    for shape in runner.SHAPES:
        for conc in (1, 2):
            cell = cells[(shape, conc)]
            assert cell["mix"]["n"] >= 12
            for key in ("p50_ms", "p95_ms", "p99_ms", "throughput_qps"):
                assert _number(cell["mix"][key]), (shape, conc, key)
            for cls in runner.CLASSES:
                assert cell["classes"][cls]["n"] > 0, (shape, conc, cls)
                assert _number(cell["classes"][cls]["p99_ms"])
    for conc in ("1", "2"):
        for ratio in ("F/B1", "F/P1"):
            for p in ("p50", "p95", "p99"):
                assert _number(results["ratios"][conc][ratio]["mix"][p])

    ingest = results["ingest"]
    assert ingest["messages"] > 0
    for key in ("messages_per_s", "p50_ms", "p99_ms", "max_ms"):
        assert _number(ingest[key]), key
    for table in ("messages", "message_events", "message_search_documents"):
        assert results["disk"][table]["total_bytes"] > 0
    assert "message_search_documents_document_idx" in results["disk"]["message_search_documents"]["indexes"]

    # The bulk-loaded world (plus the ingested messages) is what post_message keeps.
    with psycopg.connect(db_dsn) as conn, conn.cursor() as cur:
        assert corpus.check_references(cur) == []
        # The load's VACUUM left the tables nothing writes afterwards all-visible (index-only scans).
        cur.execute("""SELECT relname, relpages, relallvisible FROM pg_class
                        WHERE relnamespace = 'history'::regnamespace
                          AND relname IN ('accounts', 'conversations', 'memberships', 'identity_proofs')""")
        pages = cur.fetchall()
        assert len(pages) == 4 and all(visible == total > 0 for _, total, visible in pages), pages

    # The tables for docs/benchmarks.md, and the chart (matplotlib is in the bench extra).
    report = (tmp_path / "results.md").read_text()
    assert "| 2 | F |" in report and "Per class, concurrency 1" in report and results["summary"] in report
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# A fault each, as a bulk load with its FK triggers off could leave it, and
# the problem check_references must report for it (a fault's last statement
# plants it; a row of another tenant needs a second tenant first).
_FIRST = "(SELECT min(message_key) FROM history.message_search_documents)"
_SECOND_TENANT = ("INSERT INTO history.tenants VALUES (2, 'second')",)
PLANTED_FAULTS: dict[str, str | tuple[str, ...]] = {
    "memberships.conversation_key without conversations":
        "UPDATE history.memberships SET conversation_key = -1 WHERE membership_key = (SELECT min(membership_key) FROM history.memberships)",
    "message_events.message_key without messages":
        "INSERT INTO history.message_events (message_key, event_kind, body, occurred_at) VALUES (-1, 'created', 'x', now())",
    "events newer than their message's current event":
        f"INSERT INTO history.message_events (message_key, event_kind, body, occurred_at) VALUES ({_FIRST}, 'edited', 'x', now())",
    "messages.current_event_key without message_events":
        f"UPDATE history.messages SET current_event_key = -1 WHERE message_key = {_FIRST}",
    "current event of another message":
        f"""UPDATE history.messages SET current_event_key = (SELECT max(current_event_key) FROM history.messages)
             WHERE message_key = {_FIRST}""",
    "live message without projection row":
        f"DELETE FROM history.message_search_documents WHERE message_key = {_FIRST}",
    "projection row of a deleted message":
        f"""WITH e AS (INSERT INTO history.message_events (message_key, event_kind, body, occurred_at)
                       VALUES ({_FIRST}, 'deleted', NULL, now()) RETURNING event_key, message_key)
            UPDATE history.messages m SET current_event_key = e.event_key FROM e WHERE m.message_key = e.message_key""",
    "message_search_documents.message_key without messages":
        f"UPDATE history.message_search_documents SET message_key = -1 WHERE message_key = {_FIRST}",
    "author missing from conversation_authors":
        "DELETE FROM history.conversation_authors WHERE (author_key, conversation_key) = "
        "(SELECT author_key, conversation_key FROM history.messages ORDER BY message_key LIMIT 1)",
    "conversation_authors.conversation_key without conversations": _SECOND_TENANT + (
        "UPDATE history.conversation_authors SET tenant_key = 2 WHERE (author_key, conversation_key) = "
        "(SELECT author_key, conversation_key FROM history.conversation_authors ORDER BY 1, 2 LIMIT 1)",),
    "message_lineage.ancestor_key without messages": _SECOND_TENANT + (
        "UPDATE history.message_lineage SET tenant_key = 2 WHERE (message_key, ancestor_key) = "
        "(SELECT message_key, ancestor_key FROM history.message_lineage ORDER BY 1, 2 LIMIT 1)",),
}


def test_consistency_checks_find_each_planted_fault(db_dsn):
    """The bulk load relies on check_references instead of its FK triggers
    and post_message: each fault, planted alone, is reported by name."""
    corpus.load(db_dsn, corpus.build_world(3000, seed=5), out=io.StringIO())
    with psycopg.connect(db_dsn) as conn, conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")
        assert corpus.check_references(cur) == []
        for expected, statements in PLANTED_FAULTS.items():
            cur.execute("SAVEPOINT fault")
            for sql in (statements,) if isinstance(statements, str) else statements:
                cur.execute(sql)
            assert cur.rowcount == 1, expected  # the fault is planted
            problems = corpus.check_references(cur)
            assert any(p.endswith(expected) for p in problems), (expected, problems)
            cur.execute("ROLLBACK TO SAVEPOINT fault")


def test_floor_returns_what_search_history_returns(db_dsn):
    """B1 is a floor only if it computes the same answer: for every context
    and a spread of rare and frequent terms, its top k (and B1r's) are F's
    hits, and its exclusion counts are the ones F writes in the audit."""
    corpus.load(db_dsn, corpus.build_world(3000, seed=5), out=io.StringIO())
    with psycopg.connect(db_dsn, autocommit=True) as conn, conn.cursor() as cur:
        contexts = runner.pick_contexts(conn, 5)
        lexemes = [r[0] for r in conn.execute(
            "SELECT word FROM ts_stat('SELECT document FROM history.message_search_documents') "
            "ORDER BY ndoc DESC, word").fetchall()]
        term_sets = [lexemes[:3], lexemes[:1] + lexemes[200:202], lexemes[500:502], lexemes[-2:]]
        compared = 0
        for ctx in contexts:
            for terms in term_sets:
                params = {"q": " ".join(terms), "tq": " | ".join(runner._quote_lexeme(t) for t in terms),
                          "terms": terms, "k": runner.LIMIT}
                floor_run = runner.begin_run(conn, ctx)
                rows = cur.execute(runner.SHAPE_SQL["B1"], {"run": floor_run, **params}).fetchall()
                floor = [r[0] for r in rows if r[0] is not None]  # a row of counts alone when nothing ranks
                floor_counts = {(r[2], r[3], r[4]) for r in rows}
                ranking_only = [r[0] for r in cur.execute(runner.SHAPE_SQL["B1r"], {"run": floor_run, **params})]
                assert ranking_only == floor, (ctx, terms)
                floor_ids = [conn.execute("SELECT message_id FROM history.messages WHERE message_key = %s",
                                          (k,)).fetchone()[0] for k in floor]
                result = call_search(conn, runner.begin_run(conn, ctx), params["q"])
                hits, event = [h["message_id"] for h in result["hits"]], result["search_event_id"]
                counts = conn.execute(
                    "SELECT excluded_perspective, excluded_audience, candidates_capped "
                    "FROM history.search_audit WHERE search_event_id = %s", (event,)).fetchone()
                assert hits == floor_ids, (ctx, terms)
                assert floor_counts == {tuple(counts)}, (ctx, terms)
                compared += bool(hits)
        assert compared >= len(contexts)  # most pairs have hits: the comparison is not vacuous


def test_load_in_tenants_gives_each_tenant_its_own_copy(db_dsn):
    """``--tenants 3``: the world three times, each copy in its own tenant with its own
    keys, consistent by check_references (whose foreign keys include the tenant); a
    search in one tenant finds what the same search finds in another, by id."""
    world = corpus.build_world(900, seed=5)
    load = corpus.load(db_dsn, world, out=io.StringIO(), tenants=3)
    assert load["messages"] == 2700 and load["tenants"] == 3
    with psycopg.connect(db_dsn, autocommit=True) as conn, conn.cursor() as cur:
        assert corpus.check_references(cur) == []
        per_tenant = cur.execute(
            """SELECT t.tenant_id, count(m.*), count(DISTINCT m.conversation_key), min(m.message_key),
                      max(m.message_key)
                 FROM history.tenants t JOIN history.messages m USING (tenant_key)
                GROUP BY 1 ORDER BY 1""").fetchall()
        assert [r[:3] for r in per_tenant] == [(t, 900, per_tenant[0][2]) for t in corpus.tenant_ids(3)]
        assert [(r[3], r[4]) for r in per_tenant] == [(1, 900), (901, 1800), (1801, 2700)]
        assert cur.execute("SELECT count(*) FROM history.messages WHERE tenant_key = 1").fetchone()[0] == 0
        hits = {}
        for tenant in ("tenant-001", "tenant-003"):
            (ctx, *_) = runner.pick_contexts(conn, 5, 1, tenant)
            word = max(world.doc_freq, key=world.doc_freq.get)
            hits[tenant] = [h["message_id"] for h in call_search(conn, runner.begin_run(conn, ctx), word)["hits"]]
        assert hits["tenant-001"] and hits["tenant-001"] == hits["tenant-003"], hits
