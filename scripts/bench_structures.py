"""Time "the newest 501 matches in all of an agent's conversations"
(search_history's counting pass) under alternative structures, back to back
on one loaded bench database (what they showed: docs/decisions.md,
"Performance: what was tried and what was kept").

    psql "$DSN" -f scripts/bench_structures.sql
    .venv/bin/python scripts/bench_structures.py "$DSN" base,partloop,hybrid,bgin,part,rum > out.json

For each of the bench's four agents (visible sets 20, 200, 2000, everything)
and 40 workload queries, each variant runs --reps times in a shuffled order
per pair; a pair's time is the least of its wall times and EXPLAIN ANALYZE
times (the machine is shared: the least is the closest to an unloaded run),
its pages the shared buffers EXPLAIN (ANALYZE, BUFFERS) reports (load does
not change them). Every variant's rows are compared with base's.
"""

import json
import random
import statistics
import sys
import time

import psycopg

from history_search.bench import runner

SQL = {
    # today's function (the counting pass's call)
    "base": "SELECT message_key FROM history._newest_matches(1, %(tq)s::tsquery, %(agent)s, %(convs)s, "
            "NULL, false, NULL, NULL, NULL, 501)",
    # RUM: matches ordered by sent_at out of the index
    "rum": """SELECT d.message_key FROM history.message_search_documents d
               WHERE d.document @@ %(tq)s::tsquery
                 AND EXISTS (SELECT 1 FROM history.memberships m
                              WHERE m.account_key = %(agent)s AND m.conversation_key = d.conversation_key)
               ORDER BY d.sent_at <=| '3000-01-01 00:00+00'::timestamptz LIMIT 501""",
    # the partitioned copy, one statement (ordered Append, newest partition first)
    "part": """SELECT d.message_key FROM history.msd_part d
                WHERE d.document @@ %(tq)s::tsquery
                  AND EXISTS (SELECT 1 FROM history.memberships m
                               WHERE m.account_key = %(agent)s AND m.conversation_key = d.conversation_key)
                ORDER BY d.sent_at DESC, d.message_id DESC LIMIT 501""",
    # the partitioned copy, walked newest partition first with the text plan in each
    "partloop": "SELECT * FROM public.exp_part_newest(%(tq)s::tsquery, %(agent)s, %(convs)s, 501)",
    # base's choice for few matches and walks, partloop otherwise
    "hybrid": "SELECT * FROM public.exp_hybrid(%(tq)s::tsquery, %(agent)s, %(convs)s, 501)",
    # "terms" (a side table of postings ordered by time) is built per query: terms_sql()
    # btree_gin (conversation_key, document): the listed conversations inside the text index
    "bgin": """SELECT d.message_key FROM history.message_search_documents d
                WHERE d.document @@ %(tq)s::tsquery AND d.conversation_key = ANY (%(convs)s)
                ORDER BY d.sent_at DESC, d.message_id DESC LIMIT 501""",
}



def terms_sql() -> str:
    """"terms": each query term's postings newest first from a (lexeme, sent_at,
    message_id) btree over the side table history.msd_terms, at most 501 in
    the agent's conversations per term (a membership probe per posting: a
    listed array would be searched linearly per row); the newest 501 distinct
    messages of those are the newest 501 matches of the OR."""
    return """SELECT y.message_key FROM (
        SELECT DISTINCT ON (c.sent_at, c.message_id) c.message_key, c.sent_at, c.message_id
          FROM unnest(%(terms)s::text[]) l(lexeme)
         CROSS JOIN LATERAL (
              SELECT t.message_key, t.sent_at, t.message_id FROM history.msd_terms t
               WHERE t.lexeme = l.lexeme
                 AND EXISTS (SELECT 1 FROM history.memberships m
                              WHERE m.account_key = %(agent)s AND m.conversation_key = t.conversation_key)
               ORDER BY t.sent_at DESC, t.message_id DESC LIMIT 501) c
         ORDER BY c.sent_at DESC, c.message_id DESC) y
     LIMIT 501"""


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main(dsn: str, variants: list[str], reps: int = 2) -> dict:
    conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)
    for s in ("SET jit = off", "SET work_mem = '32MB'", "SET plan_cache_mode = force_custom_plan"):
        conn.execute(s)  # as search_history runs
    queries = runner.build_queries(runner._lexeme_frequencies(conn, None), 40, 1)
    agents = []
    for ctx in runner.pick_contexts(conn, 1, per_agent=1):
        key = conn.execute("SELECT account_key FROM history.accounts WHERE account_id = %s",
                           (ctx["agent"],)).fetchone()[0]
        convs = conn.execute("SELECT CASE WHEN count(*) <= 5000 THEN array_agg(DISTINCT conversation_key) END "
                             "FROM history.memberships WHERE account_key = %s", (key,)).fetchone()[0]
        agents.append((ctx["visible_set"], key, convs))  # listed as search_history lists them (<= 5000)
    best: dict[str, dict] = {v: {} for v in variants}
    mismatch = {v: 0 for v in variants}
    rng = random.Random(1)
    for _ in range(reps):
        for label, agent, convs in agents:
            for q in queries:
                params = {"tq": " | ".join(runner._quote_lexeme(t) for t in q["terms"]), "agent": agent, "convs": convs,
                          "terms": q["terms"]}
                SQL["terms"] = terms_sql()
                order = [v for v in variants if not (v == "bgin" and convs is None)]
                rng.shuffle(order)
                got = {}
                for v in order:
                    if v == "bgin":
                        conn.execute("SET enable_indexscan = off")  # the bitmap on the composite index
                    if v == "terms":  # the membership test per posting, not a hash of all of them
                        conn.execute("SET enable_hashjoin = off")
                        conn.execute("SET enable_mergejoin = off")
                    t0 = time.perf_counter()
                    got[v] = [r[0] for r in conn.execute(SQL[v], params)]
                    ms = (time.perf_counter() - t0) * 1000
                    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + SQL[v], params).fetchone()[0][0]
                    for setting in ("enable_indexscan", "enable_hashjoin", "enable_mergejoin"):
                        conn.execute(f"RESET {setting}")
                    pages = plan["Plan"].get("Shared Hit Blocks", 0) + plan["Plan"].get("Shared Read Blocks", 0)
                    ms = min(ms, plan["Execution Time"] + plan.get("Planning Time", 0))
                    cell = best[v].setdefault((label, q["class"], tuple(q["terms"])), [ms, pages])
                    cell[0] = min(cell[0], ms)
                    cell[1] = pages
                ref = got.get("base", got[order[0]])
                for v, rows in got.items():
                    mismatch[v] += set(rows) != set(ref)
    stats = {}
    for v in variants:
        groups: dict[str, list] = {}
        for (label, cls, _), (ms, pages) in best[v].items():
            for g in ("all", label, "class:" + cls):
                groups.setdefault(g, []).append((ms, pages))
        for g, xs in sorted(groups.items()):
            t, b = [x[0] for x in xs], [x[1] for x in xs]
            stats[f"{v}/{g}"] = dict(n=len(xs), p50=round(pct(t, 50), 1), p95=round(pct(t, 95), 1),
                                     max=round(max(t), 1), mean=round(statistics.mean(t), 1),
                                     pages_p50=pct(b, 50), pages_p95=pct(b, 95), pages_mean=round(statistics.mean(b)))
    return {"variants": variants, "reps": reps, "rows_differing_from_base": mismatch, "stats": stats}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]) if len(sys.argv) > 3 else 2),
                     indent=1))
