"""``history-search bench``: load a seeded world, then time F, B1, B1r, B0, P1 and P2.

* **F**  ``history.search_history`` itself (audit, evidence, neighbours); every
  worker begins a fresh run (untimed) after 8 searches, so the 400-message
  budget never interferes (8 x 8 hits x 5 messages = 320).
* **B1** the honest floor: all of F's candidate work as one inline SQL
  statement: the windows (the audience's from ``_audience_windows``, the
  agent's memberships cut to them), the counting pass (the newest
  ``max_counted_candidates`` matches in all the agent's conversations, found
  by ``_newest_matches`` as F finds them, each classified perspective /
  audience, counted) and the ranking pass (the
  newest ``max_candidates`` matches inside the eligible windows, found the
  same way, lineage and
  context exclusion, identical score and window stage, with its neighbour
  walk for the first 30, top k); none of F's audit, evidence, the hits'
  neighbours or text loading. F/B1 is the function's own overhead.
* **B1r** B1's windows and ranking pass only (B1 before the counting pass was
  added to it): F/B1r - F/B1 is what the counting pass costs.
* **B0** a bare GIN probe: ids only, no rank, no eligibility, ``LIMIT k``.
* **P1** Synapse's shape: ``ts_rank_cd`` over ``websearch_to_tsquery`` (terms
  joined with ``or``), handed the run's windows as parameters (Synapse is
  handed the user's room list; computed once per context, untimed), the same
  permission filter, no candidate bound, ``ORDER BY rank LIMIT k``.
* **P2** Zulip's shape: the visibility join computed in the statement (B1's
  windows), the same filter, ``ORDER BY message id DESC LIMIT k``.

B1, B1r, P1, P2 read the run parameters from the same ``history.runs`` rows F
uses. Statements are sent unprepared (``prepare_threshold=None``), so every
inline statement gets a custom plan.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from . import corpus, report

SHAPES = ["F", "B1", "B1r", "B0", "P1", "P2"]
CLASSES = ["selective", "or3", "or5_frequent", "adversarial"]
# Share of each class in the full mix (the adversarial 10% of the issue).
MIX = {"selective": 0.3, "or3": 0.3, "or5_frequent": 0.3, "adversarial": 0.1}
LIMIT = 8
RUN_REUSE = 8

# --------------------------------------------------------------------------- SQL

# The committing procedure, as a client calls it (autocommit): search, commit the audit, hits.
_F_SQL = "CALL history.search_history(%(run)s, %(q)s)"

# The run's parameters, shared by B1, P1 and P2.
_RUN_CTES = """
r AS MATERIALIZED (
    SELECT run_key, tenant_key, agent_key, conversation_key, requester_key, audience_keys,
           loaded_message_keys || current_message_key AS context
      FROM history.runs WHERE run_token = %(run)s),
st AS MATERIALIZED (SELECT * FROM history.search_settings),
ra AS MATERIALIZED (
    SELECT array_agg(a.account_key) AS keys
      FROM r JOIN history.accounts rq ON rq.account_key = r.requester_key
      JOIN history.accounts a ON a.component_key = rq.component_key)"""

# B1, B1r and P2 compute the windows inside the statement, as F does per search.
_INLINE_CTES = _RUN_CTES + """,
au AS MATERIALIZED (
    SELECT w.conversation_key, w.visible FROM r, history._audience_windows(r.tenant_key, r.audience_keys, NULL) w),
ew AS MATERIALIZED (
    SELECT au.conversation_key, a.visible * au.visible AS visible
      FROM r CROSS JOIN au
      CROSS JOIN LATERAL (SELECT range_agg(tstzrange(m.since, m.until, '[)')) AS visible
                            FROM history.memberships m
                           WHERE m.account_key = r.agent_key AND m.conversation_key = au.conversation_key) a
     WHERE NOT isempty(a.visible * au.visible)
    UNION ALL
    SELECT m.conversation_key, range_agg(tstzrange(m.since, m.until, '[)'))
      FROM history.memberships m
     WHERE m.account_key = (SELECT agent_key FROM r) AND (SELECT cardinality(audience_keys) FROM r) = 0
     GROUP BY m.conversation_key)
"""

# The same windows, computed once per context before timing and handed to P1
# (a search system holds the caller's permission set before it runs the text
# query; Synapse passes the user's room list, for instance).
WINDOWS_SQL = f"""
WITH {_INLINE_CTES}
SELECT (SELECT coalesce(array_agg(conversation_key), '{{}}') FROM au),
       (SELECT coalesce(array_agg(visible::text), '{{}}') FROM au),
       (SELECT coalesce(array_agg(conversation_key), '{{}}') FROM ew),
       (SELECT coalesce(array_agg(visible::text), '{{}}') FROM ew)
"""

# P1 is handed the windows, as Synapse is handed the user's room list.
_GIVEN_CTES = _RUN_CTES + """,
au AS (SELECT * FROM unnest(%(au_convs)s::bigint[], %(au_vis)s::tstzmultirange[]) w(conversation_key, visible)),
ew AS (SELECT * FROM unnest(%(ew_convs)s::bigint[], %(ew_vis)s::tstzmultirange[]) w(conversation_key, visible))
"""

# Inside the eligible windows, and eligible by F's own rule
# (history._ineligible_by: there only lineage and context can fail).
_ELIGIBLE_WHERE = """
       d.sent_at <@ ew.visible
   AND history._ineligible_by(
        r.tenant_key, d.message_key, d.sent_at, d.has_lineage, ew.visible, ew.visible, r.audience_keys,
        (SELECT array_agg(conversation_key) FROM au), (SELECT array_agg(visible) FROM au), r.context) IS NULL
"""

# F's ranking pass: the newest max_candidates matches inside the eligible
# windows (one more row than the cap, as F reads), found by _newest_matches
# with the arguments F gives it (the audience's windows cut to the agent's;
# without an audience, the agent's conversations, listed when at most 5 000,
# inside its membership intervals), the same filter, the same score, top k.
_RANKING_CTES = f"""
agent_conversations AS MATERIALIZED (
    SELECT CASE WHEN count(*) <= 5000 THEN coalesce(array_agg(x.conversation_key), '{{}}') END AS keys
      FROM (SELECT DISTINCT m.conversation_key FROM history.memberships m
             WHERE m.account_key = (SELECT agent_key FROM r) LIMIT 5001) x),
newest AS MATERIALIZED (
    SELECT n.* FROM r CROSS JOIN st CROSS JOIN agent_conversations ac
     CROSS JOIN (SELECT coalesce(array_agg(ew.conversation_key), '{{}}') AS keys,
                        coalesce(array_agg(ew.visible), '{{}}') AS visible FROM ew) e
     CROSS JOIN LATERAL history._newest_matches(
         r.tenant_key, %(tq)s::tsquery, r.agent_key,
         CASE WHEN cardinality(r.audience_keys) > 0 THEN e.keys ELSE ac.keys END,
         CASE WHEN cardinality(r.audience_keys) > 0 THEN e.visible END,
         coalesce(cardinality(r.audience_keys), 0) = 0,
         NULL, NULL, NULL, st.max_candidates + 1) n),
eligible AS (
    SELECT d.message_key, d.message_id, d.conversation_key, d.author_key, d.sent_at, d.document, ew.visible
      FROM (SELECT * FROM newest ORDER BY sent_at DESC, message_id DESC LIMIT (SELECT max_candidates FROM st)) d
      JOIN ew ON ew.conversation_key = d.conversation_key CROSS JOIN r
     WHERE {_ELIGIBLE_WHERE}),
people AS MATERIALIZED (  -- as search_history: each person's name terms, stored or (made in other languages) analysed
    SELECT a.account_key,
           CASE WHEN a.name_languages = l.languages::text[] THEN a.name_terms
                ELSE coalesce(history._query_terms(a.display_name, l.languages, 2147483647), '{{}}') END AS terms
      FROM r CROSS JOIN ra CROSS JOIN (SELECT history._query_languages() AS languages) l
      JOIN history.accounts a ON a.account_key = ANY (r.audience_keys || ra.keys || r.agent_key)),
names AS MATERIALIZED (  -- the query terms that name the run's people, and who
    SELECT ARRAY(SELECT q.t FROM unnest(%(terms)s::text[]) WITH ORDINALITY q(t, o)
                  WHERE EXISTS (SELECT FROM people p WHERE q.t = ANY (p.terms)) ORDER BY q.o) AS name_terms,
           coalesce((SELECT array_agg(p.account_key ORDER BY p.account_key) FROM people p
                      WHERE p.terms && %(terms)s::text[]), '{{}}') AS named),
participated AS MATERIALIZED (
    SELECT coalesce(array_agg(DISTINCT ca.conversation_key), '{{}}') AS convs
      FROM ra JOIN history.conversation_authors ca ON ca.author_key = ANY (ra.keys)),
candidate_arrays AS (
    SELECT array_agg(message_key) AS k, array_agg(document) AS d, array_agg(author_key) AS a,
           array_agg(conversation_key) AS c, array_agg(sent_at) AS t
      FROM eligible),
scored AS MATERIALIZED (  -- the same score as F (history._score over the eligible candidates as one set)
    SELECT e.message_key, e.message_id, e.conversation_key, e.sent_at, e.visible, e.document, s.total, s.term_rarity,
           row_number() OVER (ORDER BY s.total DESC, e.sent_at DESC, e.message_id) AS rank
      FROM candidate_arrays x CROSS JOIN r CROSS JOIN ra CROSS JOIN names CROSS JOIN participated
     CROSS JOIN LATERAL history._score(x.k, x.d, x.a, x.c, x.t, %(terms)s::text[], names.name_terms, ra.keys,
                                       r.conversation_key, participated.convs, names.named,
                                       (SELECT st FROM history.search_settings st), now(),
                                       history._query_period(%(q)s, now()),
                                       history._query_asks_when(%(q)s, history._query_languages())) s
      JOIN eligible e ON e.message_key = s.message_key
     ORDER BY s.total DESC, e.sent_at DESC, e.message_id
     LIMIT 100),
reach AS MATERIALIZED (  -- F's window stage: the eligible neighbours of the first 30, as F walks them
    SELECT f.first, history._hit_neighbours(r.tenant_key, f.first, r.audience_keys,
                                            (SELECT array_agg(conversation_key) FROM au),
                                            (SELECT array_agg(visible) FROM au), r.context) AS neighbours
      FROM r CROSS JOIN (SELECT array_agg(jsonb_populate_record(NULL::history._ranked_candidate, jsonb_build_object(
                                     'message_key', c.message_key, 'message_id', c.message_id,
                                     'conversation_key', c.conversation_key, 'sent_at', c.sent_at,
                                     'visible', c.visible)) ORDER BY c.rank) AS first  -- by name: the walk reads these
                           FROM scored c WHERE c.rank <= 30) f),
window_documents AS (
    SELECT coalesce(array_agg(w.match_key), '{{}}') AS window_of, coalesce(array_agg(d.document), '{{}}') AS documents
      FROM (SELECT (x.first[i]).message_key AS match_key,
                   unnest(x.neighbours[i].before || x.neighbours[i].after) AS message_key
              FROM reach x CROSS JOIN LATERAL generate_subscripts(x.neighbours, 1) i) w
      JOIN history.message_search_documents d
        ON d.message_key = w.message_key AND d.tenant_key = (SELECT tenant_key FROM r)),
ranked AS (  -- then re-ranked by history._window_scores, as F does
    SELECT c.message_key, c.total + w.window_coverage + w.feedback AS total,
           row_number() OVER (ORDER BY c.total + w.window_coverage + w.feedback DESC, c.sent_at DESC,
                                       c.message_id COLLATE "C") AS rank
      FROM scored c
      JOIN (SELECT ws.* FROM window_documents wd CROSS JOIN st
             CROSS JOIN LATERAL history._window_scores(
                 ARRAY(SELECT message_key FROM scored ORDER BY rank), ARRAY(SELECT message_id FROM scored ORDER BY rank),
                 ARRAY(SELECT sent_at FROM scored ORDER BY rank), ARRAY(SELECT total FROM scored ORDER BY rank),
                 ARRAY(SELECT document FROM scored ORDER BY rank), wd.window_of, wd.documents, %(terms)s::text[],
                 (SELECT term_rarity FROM scored LIMIT 1), st, 30) ws) w ON w.message_key = c.message_key
     ORDER BY 3
     LIMIT %(k)s)"""

_B1R_SQL = f"""
WITH {_INLINE_CTES}, {_RANKING_CTES}
SELECT message_key, total FROM ranked ORDER BY rank
"""

# F's counting pass: the newest max_counted_candidates matches in all the
# agent's conversations at any time (one more, to tell the cap was reached),
# found by _newest_matches as F finds them (the agent's conversations listed
# when at most 5 000, as F lists them: agent_conversations, with the ranking
# pass), each counted under the first rule
# that removes it (the bench's searches have no speaker or time filter:
# perspective, then audience). Not one planned statement: no single plan is
# bounded here (docs/benchmarks.md, "Shapes"), and a floor must not be a
# worse plan for the same work.
_COUNTING_CTES = """
counted AS MATERIALIZED (
    SELECT n.message_key, n.conversation_key, n.sent_at,
           row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
      FROM r CROSS JOIN agent_conversations ac CROSS JOIN st
     CROSS JOIN LATERAL history._newest_matches(r.tenant_key, %(tq)s::tsquery, r.agent_key, ac.keys, NULL, false,
                                                NULL, NULL, NULL, st.max_counted_candidates + 1) n),
counted_windows AS (  -- as F: the agent's windows in the counted conversations, one probe each
    SELECT w.conversation_key, w.visible
      FROM history._member_windows((SELECT tenant_key FROM r), (SELECT agent_key FROM r), ARRAY(SELECT DISTINCT conversation_key FROM counted)) w),
classified AS (  -- F's eligibility rule, history._ineligible_by, as F calls it here: perspective and audience
    SELECT history._ineligible_by(r.tenant_key, c.message_key, c.sent_at, false, cw.visible, au.visible, r.audience_keys,
                                  '{}', '{}', '{}') AS rule
      FROM counted c CROSS JOIN r
      JOIN counted_windows cw ON cw.conversation_key = c.conversation_key
      LEFT JOIN au ON au.conversation_key = c.conversation_key
     WHERE c.position <= (SELECT max_counted_candidates FROM st)),
exclusions AS (
    SELECT count(*) FILTER (WHERE rule = 'perspective') AS perspective,
           count(*) FILTER (WHERE rule = 'audience') AS audience,
           (SELECT count(*) FROM counted) > (SELECT max_counted_candidates FROM st) AS capped
      FROM classified)"""

_B1_SQL = f"""
WITH {_INLINE_CTES}, {_RANKING_CTES}, {_COUNTING_CTES}
SELECT k.message_key, k.total, x.perspective, x.audience,
       x.capped OR (SELECT count(*) FROM newest) > (SELECT max_candidates FROM st) AS capped
  FROM exclusions x LEFT JOIN ranked k ON true  -- the counts come back even without hits
 ORDER BY k.rank
"""

_B0_SQL = """
SELECT d.message_key FROM history.message_search_documents d
 WHERE d.document @@ %(tq)s::tsquery LIMIT %(k)s
"""

_P1_SQL = f"""
WITH {_GIVEN_CTES}
SELECT d.message_key, ts_rank_cd(d.document, websearch_to_tsquery(%(cfg)s::regconfig, %(wq)s)) AS rank
  FROM ew JOIN history.message_search_documents d ON d.conversation_key = ew.conversation_key
  CROSS JOIN r CROSS JOIN st
 WHERE d.document @@ websearch_to_tsquery(%(cfg)s::regconfig, %(wq)s) AND {_ELIGIBLE_WHERE}
 ORDER BY rank DESC
 LIMIT %(k)s
"""

_P2_SQL = f"""
WITH {_INLINE_CTES}
SELECT d.message_key
  FROM ew JOIN history.message_search_documents d ON d.conversation_key = ew.conversation_key
  CROSS JOIN r
 WHERE d.document @@ %(tq)s::tsquery AND {_ELIGIBLE_WHERE}
 ORDER BY d.message_key DESC
 LIMIT %(k)s
"""

# F's settings (the SET clauses of search_history and the plan_cache_mode it
# switches to for its candidate passes), so the floors run F's plans under
# F's conditions: no JIT (compiling costs more than any plan here saves),
# work_mem 32MB, no parallel workers, and custom plans for _newest_matches'
# nested statements.
_F_SETTINGS = ["SET jit = off", "SET work_mem = '32MB'", "SET max_parallel_workers_per_gather = 0",
               "SET plan_cache_mode = force_custom_plan"]
SHAPE_SESSION = {"B1": _F_SETTINGS, "B1r": _F_SETTINGS}

SHAPE_SQL = {"F": _F_SQL, "B1": _B1_SQL, "B1r": _B1R_SQL, "B0": _B0_SQL, "P1": _P1_SQL, "P2": _P2_SQL}


def _quote_lexeme(t: str) -> str:
    return "'" + t.replace("\\", "\\\\").replace("'", "''") + "'"


# ----------------------------------------------------------------- statistics


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of ``values`` (None when empty)."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def summarise(lat_ms: list[float], wall_s: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(lat_ms)}
    for p in (50, 95, 99):
        v = percentile(lat_ms, p)
        out[f"p{p}_ms"] = round(v, 3) if v is not None else None
    out["max_ms"] = round(max(lat_ms), 3) if lat_ms else None
    out["mean_ms"] = round(sum(lat_ms) / len(lat_ms), 3) if lat_ms else None
    if wall_s:
        out["throughput_qps"] = round(len(lat_ms) / wall_s, 1)
    return out


# --------------------------------------------------------------- the workload


def _lexeme_frequencies(conn: Any, world: corpus.World | None) -> list[tuple[str, int]]:
    """(lexeme, live documents containing it), most frequent first."""
    if world is not None and world.doc_freq:
        words = sorted(world.doc_freq.items(), key=lambda x: (-x[1], x[0]))
        # Keep only words that are their own lexeme (drops stop words).
        cur = conn.execute(
            "SELECT w FROM unnest(%s::text[]) w WHERE tsvector_to_array(to_tsvector((SELECT text_search_config FROM "
            "history.search_settings), w)) = ARRAY[w]", ([w for w, _ in words],))
        ok = {r[0] for r in cur}
        return [(w, n) for w, n in words if w in ok]
    cur = conn.execute("SELECT word, ndoc FROM ts_stat('SELECT document FROM history.message_search_documents') "
                       "ORDER BY ndoc DESC, word")
    return [(w, n) for w, n in cur]


def build_queries(freqs: list[tuple[str, int]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` queries of the four classes in the MIX proportions, deterministic."""
    rng = random.Random(f"queries-{seed}")
    top = [w for w, _ in freqs[:10]]
    frequent = [w for w, _ in freqs[:30]]
    mid = [w for w, _ in freqs[100:1500]] or [w for w, _ in freqs[10:]]
    rare = [w for w, df in freqs if 3 <= df <= 60]
    if len(rare) < 10:
        rare = [w for w, _ in freqs[len(freqs) // 2:]]
    queries: list[dict[str, Any]] = []
    for i in range(n):
        x = (i % 10) / 10
        if x < 0.3:
            cls, terms = "selective", rng.sample(rare, 2)
        elif x < 0.6:
            cls, terms = "or3", rng.sample(mid, 3)
        elif x < 0.9:
            cls, terms = "or5_frequent", rng.sample(mid, 4) + [rng.choice(frequent)]
        else:
            cls, terms = "adversarial", rng.sample(top, 3)
        queries.append({"class": cls, "terms": terms})
    rng.shuffle(queries)
    df = dict(freqs)
    for q in queries:
        q["doc_freq"] = [df.get(t, 0) for t in q["terms"]]
    return queries


def pick_contexts(conn: Any, seed: int, per_agent: int = 3, tenant: str = "default") -> list[dict[str, Any]]:
    """Agents of ``tenant`` whose visible sets are ~20, 200, 2000 conversations and everything,
    each with destinations where it is a member, a requester and a current message.

    Every statement names the tenant, so that on Citus each reads one shard."""
    rng = random.Random(f"contexts-{seed}")
    tk = conn.execute("SELECT tenant_key FROM history.tenants WHERE tenant_id = %s", (tenant,)).fetchone()[0]
    rows = conn.execute(
        """SELECT a.account_id, a.account_key, count(DISTINCT m.conversation_key) AS n
             FROM history.accounts a JOIN history.memberships m ON m.account_key = a.account_key AND m.tenant_key = %s
            WHERE a.kind = 'agent' AND a.tenant_key = %s GROUP BY 1, 2 ORDER BY n DESC, 1""", (tk, tk)).fetchall()
    total = conn.execute("SELECT count(*) FROM history.conversations WHERE tenant_key = %s", (tk,)).fetchone()[0]
    chosen: dict[str, tuple[str, int, int]] = {}
    everything = rows[0]
    chosen["everything"] = everything
    others = rows[1:] or rows
    for label, target in (("20", 20), ("200", 200), ("2000", 2000)):
        best = min(others, key=lambda r: (abs(r[2] - target), r[0]))
        if best[0] not in {c[0] for c in chosen.values()}:
            chosen[label] = best
    contexts = []
    for label, (agent_id, agent_key, n) in chosen.items():
        convs = conn.execute(
            """SELECT c.conversation_id, c.conversation_key, c.kind FROM history.memberships m
                 JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = %(t)s
                WHERE m.account_key = %(a)s AND m.until IS NULL AND m.tenant_key = %(t)s
                  AND c.conversation_key IN (SELECT x.conversation_key FROM history.messages x WHERE x.tenant_key = %(t)s)
                ORDER BY c.conversation_key""", {"a": agent_key, "t": tk}).fetchall()
        for conv_id, conv_key, kind in rng.sample(convs, min(per_agent, len(convs))):
            req = conn.execute(
                """SELECT a.account_id FROM history.memberships m
                     JOIN history.accounts a ON a.account_key = m.account_key AND a.tenant_key = %(t)s
                    WHERE m.conversation_key = %(c)s AND m.until IS NULL AND a.kind = 'person' AND m.tenant_key = %(t)s
                    ORDER BY a.account_key LIMIT 1""", {"c": conv_key, "t": tk}).fetchone()
            cur_msg = conn.execute(
                """SELECT message_id FROM history.messages WHERE conversation_key = %s AND tenant_key = %s
                    ORDER BY sent_at DESC, message_id DESC LIMIT 1""", (conv_key, tk)).fetchone()
            if req and cur_msg:
                contexts.append({"visible_set": label, "visible_conversations": n, "total_conversations": total,
                                 "agent": agent_id, "conversation": conv_id, "destination_kind": kind,
                                 "requester": req[0], "current_message": cur_msg[0], "tenant": tenant})
    return contexts


def begin_run(conn: Any, ctx: dict[str, Any]) -> str:
    return str(conn.execute("SELECT history.begin_run(%s, %s, %s, %s, p_tenant => %s)",
                            (ctx["agent"], ctx["conversation"], ctx["requester"], ctx["current_message"],
                             ctx.get("tenant", "default"))).fetchone()[0])


def build_items(queries: list[dict[str, Any]], contexts: list[dict[str, Any]],
                cfg: str = "english") -> list[dict[str, Any]]:
    items = []
    for i, q in enumerate(queries):
        ctx_i = i % len(contexts)
        terms = q["terms"]
        items.append({
            "class": q["class"], "ctx": ctx_i, "visible_set": contexts[ctx_i]["visible_set"],
            "params": {"q": " ".join(terms), "tq": " | ".join(_quote_lexeme(t) for t in terms),
                       "terms": terms, "wq": " or ".join(terms), "k": LIMIT, "cfg": cfg},
        })
    return items


# ------------------------------------------------------------------ the cells


def run_windows(conn: Any, run: str) -> dict[str, Any]:
    au_convs, au_vis, ew_convs, ew_vis = conn.execute(WINDOWS_SQL, {"run": run}).fetchone()
    return {"au_convs": au_convs, "au_vis": au_vis, "ew_convs": ew_convs, "ew_vis": ew_vis}


def run_cell(dsn: str, shape: str, items: list[dict[str, Any]], contexts: list[dict[str, Any]],
             template_runs: list[str],
             windows: list[dict[str, Any]], concurrency: int, duration_s: float,
             min_queries: int) -> dict[str, Any]:
    """Closed loop: ``concurrency`` workers take the next item until the time is up."""
    import psycopg

    sql = SHAPE_SQL[shape]
    lock = threading.Lock()
    state = {"next": 0}
    samples: list[tuple[str, str, float]] = []
    errors: list[str] = []
    start = time.monotonic()
    deadline = start + duration_s

    def worker() -> None:
        runs: dict[int, list[Any]] = {}
        try:
            with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as conn:
                for setting in SHAPE_SESSION.get(shape, []):
                    conn.execute(setting)
                while True:
                    with lock:
                        i = state["next"]
                        if time.monotonic() >= deadline and i >= min_queries:
                            return
                        state["next"] += 1
                    item = items[i % len(items)]
                    if shape == "F":
                        slot = runs.get(item["ctx"])
                        if slot is None or slot[1] >= RUN_REUSE:
                            slot = runs[item["ctx"]] = [begin_run(conn, contexts[item["ctx"]]), 0]
                        slot[1] += 1
                        params = {"run": slot[0], **item["params"]}
                    else:
                        params = {"run": template_runs[item["ctx"]], **item["params"], **windows[item["ctx"]]}
                    t0 = time.perf_counter()
                    conn.execute(sql, params).fetchall()
                    ms = (time.perf_counter() - t0) * 1000
                    with lock:
                        samples.append((item["class"], item["visible_set"], ms))
        except Exception as e:  # reported, and fails the bench
            errors.append(f"{shape}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    if errors:
        raise RuntimeError("; ".join(errors[:3]))
    result: dict[str, Any] = {"shape": shape, "concurrency": concurrency, "wall_s": round(wall, 3),
              "mix": summarise([s[2] for s in samples], wall), "classes": {}, "visible_sets": {}}
    for cls in CLASSES:
        result["classes"][cls] = summarise([s[2] for s in samples if s[0] == cls])
    for vs in sorted({s[1] for s in samples}):
        result["visible_sets"][vs] = summarise([s[2] for s in samples if s[1] == vs])
    return result


def ingest_burst(dsn: str, clients: int, duration_s: float, max_per_client: int, seed: int) -> dict[str, Any]:
    """Closed-loop post_message calls (one transaction each) from ``clients`` connections."""
    import psycopg

    rng = random.Random(f"ingest-{seed}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        # Open memberships of every tenant (each statement names one: on Citus, one shard).
        pairs = []
        for tenant, tk in conn.execute("SELECT tenant_id, tenant_key FROM history.tenants ORDER BY tenant_key").fetchall():
            pairs += [(tenant, *r) for r in conn.execute(
                """SELECT c.conversation_id, a.account_id FROM history.memberships m
                     JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = %(t)s
                     JOIN history.accounts a ON a.account_key = m.account_key AND a.tenant_key = %(t)s
                    WHERE m.until IS NULL AND m.tenant_key = %(t)s ORDER BY m.membership_key LIMIT %(n)s""",
                {"t": tk, "n": 5000 if tk == 1 else 50}).fetchall()]
        vocab = [r[0] for r in conn.execute(
            "SELECT word FROM ts_stat('SELECT document FROM history.message_search_documents "
            "WHERE message_key % 50 = 0') ORDER BY ndoc DESC LIMIT 2000")]
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    run_id = f"{int(time.time())}-{rng.randrange(10**6)}"
    start = time.monotonic()
    deadline = start + duration_s

    def worker(w: int) -> None:
        r = random.Random(f"ingest-{seed}-{w}")
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                for i in range(max_per_client):
                    if time.monotonic() >= deadline:
                        return
                    tenant, conv, author = r.choice(pairs)
                    body = " ".join(r.choices(vocab, k=r.randint(4, 24)))
                    at = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
                    t0 = time.perf_counter()
                    conn.execute("SELECT history.post_message(%s, %s, %s, %s, %s, '{}', %s)",
                                 (f"ingest-{run_id}-{w}-{i}", conv, author, body, at, tenant))
                    ms = (time.perf_counter() - t0) * 1000
                    with lock:
                        lat.append(ms)
        except Exception as e:
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    if errors:
        raise RuntimeError("ingest: " + "; ".join(errors[:3]))
    s = summarise(lat, wall)
    return {"clients": clients, "messages": len(lat), "wall_s": round(wall, 3),
            "messages_per_s": s.get("throughput_qps"), "p50_ms": s["p50_ms"], "p99_ms": s["p99_ms"],
            "max_ms": s["max_ms"], "stalls_over_100ms": sum(1 for x in lat if x > 100)}


def disk_sizes(dsn: str, n_messages: int) -> dict[str, Any]:
    import psycopg

    per_m = 1e6 / max(1, n_messages)
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT c.relname, pg_relation_size(c.oid), pg_total_relation_size(c.oid),
                      coalesce((SELECT json_object_agg(i.relname, pg_relation_size(i.oid))
                                  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                                 WHERE x.indrelid = c.oid), '{}')
                 FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
                WHERE s.nspname = 'history' AND c.relkind = 'r' AND c.relname = ANY (%s)
                ORDER BY c.relname""",
            (corpus.LOADED_TABLES + ["conversation_search_events", "run_evidence", "runs", "run_trace"],)).fetchall()
    out = {}
    for name, heap, total, idx in rows:
        out[name] = {"heap_bytes": heap, "total_bytes": total, "indexes": idx,
                     "total_mb_per_million_messages": round(total * per_m / 2**20, 1)}
    out["_all_loaded_tables_mb"] = round(sum(v["total_bytes"] for k, v in out.items()
                                             if k in corpus.LOADED_TABLES) / 2**20, 1)
    return out


def distribute_loaded(dsn: str) -> dict[str, Any]:
    """``history-search distribute`` a bulk-loaded coordinator (Citus copies the rows into the
    shards), then VACUUM ANALYZE (Citus runs it on every shard); timings and tenants per worker."""
    import psycopg

    from ..distribute import distribute

    t = time.monotonic()
    distribute(dsn)
    t_distribute = time.monotonic() - t
    t = time.monotonic()
    with psycopg.connect(dsn, autocommit=True) as connection:
        conn: Any = connection
        conn.execute("VACUUM ANALYZE " + ", ".join(f"history.{table}" for table in corpus.LOADED_TABLES))
        spread = conn.execute(
            """SELECT p.nodename || ':' || p.nodeport, count(*) FROM history.tenants t
                 JOIN pg_dist_shard_placement p
                   ON p.shardid = get_shard_id_for_distribution_column('history.messages', t.tenant_key)
                WHERE t.tenant_key IN (SELECT DISTINCT c.tenant_key FROM history.conversations c)
                GROUP BY 1 ORDER BY 1""").fetchall()
    return {"seconds": round(t_distribute, 1), "vacuum_analyze_s": round(time.monotonic() - t, 1),
            "tenants_per_node": dict(spread)}


def search_tenants(conn: Any, citus: bool, most: int = 4) -> list[dict[str, Any]]:
    """The tenants the searches run in: the built-in one when it holds the corpus, else up to
    ``most`` loaded ones, taken in turn from each node that holds tenants (on Citus, so that
    searches run on every worker)."""
    rows = conn.execute(
        """SELECT t.tenant_id, t.tenant_key FROM history.tenants t
            WHERE t.tenant_key IN (SELECT DISTINCT c.tenant_key FROM history.conversations c)
            ORDER BY t.tenant_key""").fetchall()
    by_node: dict[str, list[str]] = {}
    for tenant, key in rows:
        node = "local"
        if citus:
            node = conn.execute(
                """SELECT p.nodename || ':' || p.nodeport FROM pg_dist_shard_placement p
                    WHERE p.shardid = get_shard_id_for_distribution_column('history.messages', %s)""",
                (key,)).fetchone()[0]
        by_node.setdefault(node, []).append(tenant)
    chosen: list[dict[str, Any]] = []
    queues = [list(v) for _, v in sorted(by_node.items())]
    while len(chosen) < most and any(queues):
        for node, queue in zip(sorted(by_node), queues):
            if queue and len(chosen) < most:
                chosen.append({"tenant": queue.pop(0), "node": node})
    return chosen


# What pg_stat_statements on a worker counts but the search did not send: Citus'
# maintenance (deadlock detection's wait edges, 2PC recovery), this count's own
# calls, the second statement of the BEGIN Citus sends as one command, and the
# foreign-key checks the worker runs itself.
_NOT_A_ROUND_TRIP = ("pg_stat_statements|waiting_pid|dump_local_wait_edges|pg_prepared_xacts"
                     "|assign_distributed_transaction_id|FROM ONLY ")


def search_round_trips(dsn: str, contexts: list[dict[str, Any]], items: list[dict[str, Any]],
                       searches: int = RUN_REUSE) -> dict[str, Any]:
    """The commands (each a round trip) Citus sends to the workers for one search (F),
    counted by pg_stat_statements on each worker over ``searches`` searches of one run."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(dsn, autocommit=True) as connection:
        conn: Any = connection
        nodes = conn.execute("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive "
                             "ORDER BY nodeport").fetchall()
        workers = [make_conninfo(dsn, host=h, port=str(p)) for h, p in nodes]
        ctx_i = 0
        run = begin_run(conn, contexts[ctx_i])
        try:
            # Created on the coordinator: Citus creates it on the workers (and refuses it there).
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            for w in workers:
                with psycopg.connect(w, autocommit=True) as c:
                    c.execute("SELECT pg_stat_statements_reset()")
        except psycopg.Error as e:
            return {"error": f"pg_stat_statements on the workers: {e}".strip()}
        mine = [i for i in items if i["ctx"] == ctx_i][:searches]
        for item in mine:
            conn.execute(_F_SQL, {"run": run, **item["params"]}).fetchall()
    statements: dict[str, int] = {}
    total = 0
    for w in workers:
        with psycopg.connect(w, autocommit=True) as c:
            for query, calls in c.execute(
                    """SELECT s.query, s.calls FROM pg_stat_statements s
                        WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                          AND s.query !~ %s
                        ORDER BY s.calls DESC""", (_NOT_A_ROUND_TRIP,)):
                total += calls
                key = " ".join(query.split()[:3])
                statements[key] = statements.get(key, 0) + calls
    top = sorted(statements.items(), key=lambda kv: -kv[1])[:8]
    return {"searches": len(mine), "statements_per_search": round(total / max(1, len(mine)), 1),
            "context": contexts[ctx_i]["tenant"], "most_frequent": {k: round(v / max(1, len(mine)), 1) for k, v in top}}


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def summary_line(cells: list[dict[str, Any]]) -> str:
    c1 = {c["shape"]: c["mix"] for c in cells if c["concurrency"] == 1}
    f, b1, p1 = c1.get("F", {}), c1.get("B1", {}), c1.get("P1", {})

    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.2f}x"
    f_p95 = f.get("p95_ms")
    return (f"summary: F/B1 p50={fmt(_ratio(f.get('p50_ms'), b1.get('p50_ms')))} "
            f"p99={fmt(_ratio(f.get('p99_ms'), b1.get('p99_ms')))} "
            f"F/P1 p50={fmt(_ratio(f.get('p50_ms'), p1.get('p50_ms')))} "
            f"F p95={'n/a' if f_p95 is None else f'{f_p95:.1f}ms'}")


def chart(results: dict[str, Any], path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    cells = [c for c in results["cells"] if c["concurrency"] == 1]
    if not cells:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / max(1, len(cells))
    for j, c in enumerate(cells):
        xs = [i + j * width for i in range(len(CLASSES) + 1)]
        ys = [c["classes"][k]["p50_ms"] or 0 for k in CLASSES] + [c["mix"]["p50_ms"] or 0]
        ax.bar(xs, ys, width, label=c["shape"])
    ax.set_xticks([i + 0.4 for i in range(len(CLASSES) + 1)], CLASSES + ["mix"])
    ax.set_ylabel("p50 latency (ms), concurrency 1")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"history-search bench, {results['corpus']['messages']} messages")
    fig.tight_layout()
    fig.savefig(path)
    return str(path)


# ------------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=100000, help="corpus size (default 100000)")
    parser.add_argument("--dsn", default=None,
                        help="superuser DSN of an empty migrated database (default: a throwaway cluster)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="bench-out",
                        help="directory for results.json, results.md and chart.png (default: bench-out, "
                             "under the current directory)")
    parser.add_argument("--concurrency", default="1,2,8", help="comma-separated closed-loop concurrency levels")
    parser.add_argument("--duration-s", type=float, default=6.0, help="seconds per shape and concurrency level")
    parser.add_argument("--min-queries", type=int, default=40, help="at least this many queries per cell")
    parser.add_argument("--queries", type=int, default=200, help="distinct queries in the workload")
    parser.add_argument("--ingest-s", type=float, default=3.0, help="seconds of post_message ingest")
    parser.add_argument("--ingest-clients", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="the database already holds a corpus: do not load")
    parser.add_argument("--tenants", type=int, default=1,
                        help="load the world this many times, each copy its own tenant (--messages in all); "
                             "the searches run in up to 4 of them (default 1: the built-in tenant)")
    parser.add_argument("--citus", action="store_true",
                        help="on Citus: a throwaway coordinator and two workers (or --dsn of a coordinator with its "
                             "workers registered), bulk-loaded before `distribute`; times F and ingest, and counts "
                             "the round trips a search makes to the workers")
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated shapes to time (default all; on Citus F alone runs)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


# Each node of a throwaway Citus cluster (three on one machine: a third of one server's buffers).
CITUS_SETTINGS = {"shared_buffers": "192MB", "max_wal_size": "4GB",
                  "shared_preload_libraries": "citus,pg_stat_statements"}


def run(args: argparse.Namespace) -> int:
    if args.dsn:
        return _bench(args, args.dsn)
    from ..cluster import ThrowawayCluster
    from ..migrations import apply_migrations
    import psycopg

    if args.citus:
        from ..citus_cluster import ThrowawayCitusCluster
        with ThrowawayCitusCluster(workers=2, settings=CITUS_SETTINGS) as citus:
            dsn = citus.create_database("history_bench")
            apply_migrations(dsn)
            return _bench(args, dsn)

    with ThrowawayCluster(settings={"shared_buffers": "512MB", "max_wal_size": "4GB"}) as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE history_bench")
        dsn = cluster.dsn_for("history_bench")
        apply_migrations(dsn)
        return _bench(args, dsn)


def _bench(args: argparse.Namespace, dsn: str) -> int:
    import psycopg

    out = None if args.quiet else sys.stderr
    def say(message: str) -> None:
        if out is not None:
            print(message, file=out, flush=True)
    levels = [int(x) for x in str(args.concurrency).split(",") if x.strip()]
    # The other shapes read the tables without naming a tenant: on Citus only F runs.
    shapes = [x for x in SHAPES if x in str(args.shapes).split(",") and (x == "F" or not args.citus)]
    results: dict[str, Any] = {"started_at": dt.datetime.now(dt.timezone.utc).isoformat(), "seed": args.seed,
                     "limit": LIMIT, "mix": MIX, "duration_s_per_cell": args.duration_s,
                     "citus": bool(args.citus), "tenants": args.tenants}
    world = None
    if not args.reuse:
        per_tenant = args.messages // args.tenants
        say(f"building world: {per_tenant} messages x {args.tenants} tenant(s), seed {args.seed}")
        world = corpus.build_world(per_tenant, args.seed)
        say(f"  {world.stats}")
        results["bulk_load"] = corpus.load(dsn, world, out=out, tenants=args.tenants)
        say(f"  bulk load: {results['bulk_load']['seconds']['total']}s "
            f"({results['bulk_load']['messages_per_s']} messages/s)")
        if args.citus:
            results["distribute"] = distribute_loaded(dsn)
            say(f"  distribute: {results['distribute']}")
    with psycopg.connect(dsn, autocommit=True) as connection:
        conn: Any = connection
        n_messages = conn.execute("SELECT count(*) FROM history.messages").fetchone()[0]
        results["server"] = conn.execute("SELECT version()").fetchone()[0]
        results["corpus"] = {"messages": n_messages,
                             "live": conn.execute("SELECT count(*) FROM history.message_search_documents").fetchone()[0]}
        freqs = _lexeme_frequencies(conn, world)
        queries = build_queries(freqs, args.queries, args.seed)
        searched = search_tenants(conn, args.citus)
        results["searched_tenants"] = searched
        contexts = [c for tenant in searched
                    for c in pick_contexts(conn, args.seed, 3 if len(searched) == 1 else 1, tenant["tenant"])]
        # The runs B1, B1r, P1 and P2 read (F begins its own).
        template_runs = [begin_run(conn, c) for c in contexts] if set(shapes) - {"F"} else []
        windows = [run_windows(conn, r) for r in template_runs]
        cfg = conn.execute("SELECT text_search_config::text FROM history.search_settings").fetchone()[0]
    results["contexts"] = contexts
    results["query_examples"] = {c: next(q for q in queries if q["class"] == c) for c in CLASSES}
    items = build_items(queries, contexts, cfg)
    say(f"workload: {len(queries)} queries x {len(contexts)} contexts "
        f"(visible sets {sorted({c['visible_set'] for c in contexts})})")

    # Warm the cache once over the whole workload (B1 touches what F touches).
    # Every item: F's cell runs first, and at 10M it gets through ~180 items,
    # so with fewer warmed F's first reads of the rest were its samples.
    for shape in ("B1", "F"):
        if shape in shapes:
            run_cell(dsn, shape, items, contexts, template_runs, windows, 1, 0.0, len(items))
    cells = []
    for c in levels:
        for shape in shapes:
            cell = run_cell(dsn, shape, items, contexts, template_runs, windows, c, args.duration_s, args.min_queries)
            cells.append(cell)
            m = cell["mix"]
            say(f"  c={c} {shape:<3} n={m['n']:<5} p50={m['p50_ms']:.2f}ms p95={m['p95_ms']:.2f}ms "
                f"p99={m['p99_ms']:.2f}ms {m['throughput_qps']} q/s")
    results["cells"] = cells
    ratios = {}
    for c in levels:
        by = {x["shape"]: x for x in cells if x["concurrency"] == c}
        r = {}
        for key, (a, b) in {"F/B1": ("F", "B1"), "F/B1r": ("F", "B1r"), "F/P1": ("F", "P1"), "F/P2": ("F", "P2"),
                            "B1/B0": ("B1", "B0")}.items():
            if a in by and b in by:
                r[key] = {"mix": {p: _ratio(by[a]["mix"][f"{p}_ms"], by[b]["mix"][f"{p}_ms"]) for p in ("p50", "p95", "p99")}}
                for cls in CLASSES:
                    r[key][cls] = {p: _ratio(by[a]["classes"][cls][f"{p}_ms"], by[b]["classes"][cls][f"{p}_ms"])
                                   for p in ("p50", "p95", "p99")}
        ratios[str(c)] = r
    results["ratios"] = ratios

    say(f"ingest: post_message, {args.ingest_clients} clients, {args.ingest_s}s")
    results["ingest"] = ingest_burst(dsn, args.ingest_clients, args.ingest_s, 100000, args.seed)
    say(f"  {results['ingest']}")
    if args.citus and "F" in shapes:
        results["search_round_trips"] = search_round_trips(dsn, contexts, items)
        say(f"  statements on the workers per search: {results['search_round_trips']}")
    if not args.citus:  # on Citus the tables on the coordinator are empty shells
        results["disk"] = disk_sizes(dsn, n_messages)
    results["summary"] = summary_line(cells)

    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.json").write_text(json.dumps(results, indent=2, default=str))
    (outdir / "results.md").write_text(report.render(results))
    png = chart(results, outdir / "chart.png")
    results["chart"] = png
    print(f"results: {outdir / 'results.json'}, {outdir / 'results.md'}")
    print(f"chart: {png}" if png else "chart: not written (matplotlib is not importable)")
    print(results["summary"])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="history-search bench", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
