"""``history-search eval``: relevance of search on LoCoMo-format conversations, next to BM25 and ts_rank.

For each conversation and each of two date variants (LoCoMo's own dates, and
the same dates moved so the last turn was yesterday, so recency is live) it
loads the conversation through the runtime API — the two people and an agent
as members of one group conversation, each turn a message at its session's
time — and asks every question as its own run (default audience,
``speaker='anyone'``, limit 20) through the client's ``Search.search``.
The requester of question *i* is the first person for even *i*, the second
for odd *i*; the run's current message is a "?" that person posted after the
last turn. On the same lexemes (read from the projection's tsvectors) it ranks
with BM25 and with ``ts_rank`` alone. docs/relevance.md explains the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from . import locomo, restatement
from .bm25 import BM25

__all__ = ["add_arguments", "run", "main", "evaluate_ranking", "evidence_places", "summary_line"]

LIMIT = 20
KS = (5, 8, 20)
# Where an evidence turn ended up for one question (evidence_places), in report order.
PLACES = ("hit", "neighbour", "ranked_9_20", "below_20", "no_term")
CONTEXT_K = 8
NEIGHBOURS = 2  # each side, for the baselines (search returns its own)
VARIANTS = ("locomo", "recent")
GROUPS = ("1", "2", "3", "4", "1-4", "5")

QUERY_TERMS_SQL = """
SELECT history._query_terms(left(%(q)s, s.max_query_chars), history._query_languages(), s.max_query_terms)
  FROM history.search_settings s
"""


def _quote_lexeme(t: str) -> str:
    return "'" + t.replace("\\", "\\\\").replace("'", "''") + "'"


# ------------------------------------------------------------------ loading


def _ids(prefix: str, variant: str, conv: locomo.Conversation) -> dict[str, Any]:
    base = f"{prefix}:{variant}:{conv.name}"
    return {"conversation": base, "agent": f"{base}:agent",
            "people": {s: f"{base}:{s}" for s in conv.speakers},
            "ask": {s: f"{base}:ask-{k}" for k, s in zip("ab", conv.speakers)},
            "message": lambda dia: f"{base}:{dia}"}


def load_conversation(conn: Any, prefix: str, variant: str, conv: locomo.Conversation,
                      shift: timedelta) -> dict[str, Any]:
    """Write one conversation through the runtime API; returns its ids."""
    from ..client import Runtime

    rt = Runtime(conn)
    ids = _ids(prefix, variant, conv)
    first = conv.turns[0].sent_at + shift
    last = conv.turns[-1].sent_at + shift
    with conn.transaction():
        rt.upsert_account(ids["agent"], "agent", "assistant")
        for name, account in ids["people"].items():
            rt.upsert_account(account, "person", name)
        rt.upsert_conversation(ids["conversation"], "group", f"LoCoMo {conv.name} ({variant} dates)")
        for account in [ids["agent"], *ids["people"].values()]:
            rt.add_member(ids["conversation"], account, first - timedelta(days=1))
        for t in conv.turns:
            rt.post_message(ids["message"](t.dia_id), ids["conversation"], ids["people"][t.speaker],
                            locomo.turn_body(t), t.sent_at + shift)
        for i, (name, msg) in enumerate(ids["ask"].items()):
            rt.post_message(msg, ids["conversation"], ids["people"][name], "?", last + timedelta(minutes=1 + i))
    return ids


# ------------------------------------------------------------------ metrics


def evaluate_ranking(ranked: list[str], neighbours: dict[str, set[str]], evidence: set[str]) -> dict[str, float]:
    """Per-question figures of one ranking: recall of hits at 5/8/20, context recall at 8 (hits and
    their neighbours), reciprocal rank of the first evidence hit, messages returned with the top 8."""
    out: dict[str, float] = {f"r{k}": len(evidence & set(ranked[:k])) / len(evidence) for k in KS}
    context = set(ranked[:CONTEXT_K])
    for h in ranked[:CONTEXT_K]:
        context |= neighbours.get(h, set())
    out["ctx8"] = len(evidence & context) / len(evidence)
    out["rr"] = next((1.0 / (i + 1) for i, h in enumerate(ranked) if h in evidence), 0.0)
    out["returned8"] = len(context)
    return out


def evidence_places(ranked: list[str], neighbours: dict[str, set[str]], evidence: set[str],
                    matching: set[str]) -> dict[str, int]:
    """Where each evidence turn of one question ended up: a hit in the first 8 (``hit``); shown only as
    a neighbour of one (``neighbour``); else ranked 9-20 (``ranked_9_20``), matching a query term but
    not in the first 20 (``below_20``), or matching no term of the query at all (``no_term``: no
    lexical ranking makes it a hit). ``matching``: the turns that contain a query term."""
    out = dict.fromkeys(PLACES, 0)
    context: set[str] = set()
    for h in ranked[:CONTEXT_K]:
        context |= neighbours.get(h, set())
    for e in evidence:
        if e in ranked[:CONTEXT_K]:
            out["hit"] += 1
        elif e in context:
            out["neighbour"] += 1
        elif e in ranked[:LIMIT]:
            out["ranked_9_20"] += 1
        elif e in matching:
            out["below_20"] += 1
        else:
            out["no_term"] += 1
    return out


def _matching(docs: dict[str, dict[str, int]], turns: set[str], terms: list[str]) -> set[str]:
    return {d for d in turns if any(t in docs[d] for t in terms)}


def _aggregate(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean of each figure per category, over categories 1-4 and for 5 apart; recall@8 by evidence author."""
    out: dict[str, dict[str, Any]] = {}
    for g in GROUPS:
        sel = [r for r in rows if (str(r["category"]) == g) or (g == "1-4" and r["category"] in (1, 2, 3, 4))]
        if not sel:
            out[g] = {"n": 0}
            continue
        agg: dict[str, Any] = {"n": len(sel)}
        for key in [f"r{k}" for k in KS] + ["ctx8", "rr", "returned8"]:
            agg[key] = round(sum(r[key] for r in sel) / len(sel), 4)
        for role in ("requester", "other"):
            found = sum(r["by_role"][role][0] for r in sel)
            total = sum(r["by_role"][role][1] for r in sel)
            agg[f"r8_{role}"] = round(found / total, 4) if total else None
            agg[f"evidence_{role}"] = total
        agg["places"] = {p: sum(r["places"][p] for r in sel) for p in PLACES}
        out[g] = agg
    return out


def _by_role(ranked: list[str], evidence: set[str], authors: dict[str, str], requester: str) -> dict[str, list[int]]:
    top = set(ranked[:8])
    roles = {"requester": [0, 0], "other": [0, 0]}
    for e in evidence:
        role = "requester" if authors[e] == requester else "other"
        roles[role][1] += 1
        roles[role][0] += e in top
    return roles


# ------------------------------------------------------------------ the run


def _baseline_neighbours(conv: locomo.Conversation) -> dict[str, set[str]]:
    order = [t.dia_id for t in conv.turns]
    return {d: set(order[max(0, i - NEIGHBOURS):i] + order[i + 1:i + 1 + NEIGHBOURS]) for i, d in enumerate(order)}


def _documents(conn: Any, ids: dict[str, Any], conv: locomo.Conversation) -> dict[str, dict[str, int]]:
    """Each turn's lexemes with their counts, as the projection's tsvector holds them."""
    back = {ids["message"](t.dia_id): t.dia_id for t in conv.turns}
    docs: dict[str, dict[str, int]] = {t.dia_id: {} for t in conv.turns}
    rows = conn.execute(
        """SELECT d.message_id, u.lexeme, coalesce(cardinality(u.positions), 1)
             FROM history.message_search_documents d
             JOIN history.conversations c ON c.conversation_key = d.conversation_key
            CROSS JOIN LATERAL unnest(d.document) u
            WHERE c.conversation_id = %s""", (ids["conversation"],)).fetchall()
    for message_id, lexeme, n in rows:
        if message_id in back:
            docs[back[message_id]][lexeme] = n
    return docs


def _ask(conn: Any, q: locomo.Question, conv: locomo.Conversation, ids: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One question as its own run, through the client; returns the requester and the ranked dia_ids
    with each hit's neighbours."""
    from ..client import Runtime, Search

    requester = conv.speakers[q.index % 2]
    rt = Runtime(conn)
    run = rt.begin_run(ids["agent"], ids["conversation"], ids["people"][requester], ids["ask"][requester])
    result = Search(conn, run).search(q.question, speaker="anyone", limit=LIMIT)
    rt.end_run(run)
    strip = len(ids["conversation"]) + 1
    ranked: list[str] = []
    neighbours: dict[str, set[str]] = {}
    scores: list[float] = []
    for h in result.hits:
        d = h.message_id[strip:]
        ranked.append(d)
        neighbours[d] = {n.message_id[strip:] for n in (*h.before, *h.after)}
        scores.append(h.score)
    return requester, {"ranked": ranked, "neighbours": neighbours, "scores": scores}


def _apply_settings(conn: Any, settings: dict[str, str]) -> dict[str, str]:
    """Set search_settings columns; returns their previous values (as text)."""
    from psycopg import sql

    old: dict[str, str] = {}
    for k, v in settings.items():
        old[k] = conn.execute(sql.SQL("SELECT {}::text FROM history.search_settings").format(sql.Identifier(k))).fetchone()[0]
        conn.execute(sql.SQL("UPDATE history.search_settings SET {} = %s").format(sql.Identifier(k)), (v,))
    return old


# The weights of the ranking components (reasons keys); the other *_weight settings
# (derived_term_weight, name_term_weight) scale a term inside the text score.
COMPONENT_WEIGHTS = ("text_weight", "coverage_weight", "actor_weight", "conversation_weight",
                     "participation_weight", "recency_weight", "named_speaker_weight", "session_weight",
                     "period_weight", "tells_time_weight")


def _signal_weights(conn: Any) -> list[str]:
    cols = [r[0] for r in conn.execute(
        """SELECT column_name FROM information_schema.columns
            WHERE table_schema = 'history' AND table_name = 'search_settings'
            ORDER BY ordinal_position""").fetchall()]
    return [c for c in cols if c in COMPONENT_WEIGHTS
            and conn.execute(f"SELECT {c}::float8 FROM history.search_settings").fetchone()[0] not in (0, None)]


def _search_pass(conn: Any, convs: Sequence[locomo.Conversation], loaded: dict[tuple[str, str], dict[str, Any]],
                 say: Callable[[str], None], label: str) -> dict[str, list[dict[str, Any]]]:
    """Every question of every conversation, in both date variants: per-question rows per variant."""
    out: dict[str, list[dict[str, Any]]] = {}
    for variant in VARIANTS:
        rows: list[dict[str, Any]] = []
        started = time.monotonic()
        for conv in convs:
            ids = loaded[(variant, conv.name)]
            authors = {t.dia_id: t.speaker for t in conv.turns}
            docs = _documents(conn, ids, conv)
            for q in conv.questions:
                if not q.evidence:
                    continue
                requester, res = _ask(conn, q, conv, ids)
                ev = set(q.evidence)
                terms = conn.execute(QUERY_TERMS_SQL, {"q": q.question}).fetchone()[0]
                row = {"conversation": conv.name, "index": q.index, "category": q.category,
                       "requester": requester, **evaluate_ranking(res["ranked"], res["neighbours"], ev),
                       "by_role": _by_role(res["ranked"], ev, authors, requester), "ranked": res["ranked"][:8],
                       "places": evidence_places(res["ranked"], res["neighbours"], ev, _matching(docs, ev, terms))}
                rows.append(row)
        say(f"  {label} {variant}: {len(rows)} searches in {time.monotonic() - started:.1f}s")
        out[variant] = rows
    return out


QUESTION_SQL = """
SELECT lower(history._query_period(%(q)s, now())), upper(history._query_period(%(q)s, now())),
       history._query_asks_when(%(q)s, history._query_languages())::text, now()
"""


def _restated(conn: Any, conv: locomo.Conversation, docs: dict[str, dict[str, int]], q: locomo.Question,
              terms: list[str], requester: str, params: restatement.Params) -> list[str]:
    """The question ranked by history._score restated (relevance/restatement.py), LoCoMo's dates."""
    names = {s: set(conn.execute(QUERY_TERMS_SQL, {"q": s}).fetchone()[0]) for s in conv.speakers}
    lower, upper, asks_when, now = conn.execute(QUESTION_SQL, {"q": q.question}).fetchone()
    turns = [restatement.Turn(t.dia_id, t.speaker, t.sent_at, docs[t.dia_id]) for t in conv.turns]
    return restatement.rank(
        turns, terms, {t for s in names.values() for t in s} & set(terms),
        {s for s, n in names.items() if n & set(terms)}, requester,
        (lower, upper) if lower is not None else None,
        None if asks_when is None else set(_QUOTED.findall(asks_when)), now, params, LIMIT)


_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def _baselines(conn: Any, convs: Sequence[locomo.Conversation],
               loaded: dict[tuple[str, str], dict[str, Any]],
               params: restatement.Params) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {"bm25": [], "ts_rank": [], "restatement": []}
    for conv in convs:
        ids = loaded[(VARIANTS[0], conv.name)]
        docs = _documents(conn, ids, conv)
        order = [t.dia_id for t in conv.turns]
        newest_first = {d: i for i, d in enumerate(order)}
        bm25 = BM25([docs[d] for d in order])
        nb = _baseline_neighbours(conv)
        authors = {t.dia_id: t.speaker for t in conv.turns}
        conv_key = conn.execute("SELECT conversation_key FROM history.conversations WHERE conversation_id = %s",
                                (ids["conversation"],)).fetchone()[0]
        strip = len(ids["conversation"]) + 1
        for q in conv.questions:
            if not q.evidence:
                continue
            requester = conv.speakers[q.index % 2]
            terms = conn.execute(QUERY_TERMS_SQL, {"q": q.question}).fetchone()[0]
            ev = set(q.evidence)
            scores = bm25.scores(terms)
            # Ties newest first, like search.
            ranked = sorted((d for d in order if any(t in docs[d] for t in terms)),
                            key=lambda d: (-scores[newest_first[d]], -newest_first[d]))[:LIMIT]
            ts: list[str] = []
            if terms:
                query = " | ".join(_quote_lexeme(t) for t in terms)
                ts = [r[0][strip:] for r in conn.execute(
                    """SELECT d.message_id FROM history.message_search_documents d
                        WHERE d.conversation_key = %s AND d.document @@ %s::tsquery AND d.message_id = ANY (%s)
                        ORDER BY ts_rank(d.document, %s::tsquery) DESC, d.sent_at DESC, d.message_id DESC
                        LIMIT %s""",
                    (conv_key, query, [ids["message"](d) for d in order], query, LIMIT)).fetchall()]
            restated = _restated(conn, conv, docs, q, terms, requester, params)
            for name, r in (("bm25", ranked), ("ts_rank", ts), ("restatement", restated)):
                rows[name].append({"conversation": conv.name, "index": q.index, "category": q.category,
                                   "requester": requester, **evaluate_ranking(r, nb, ev),
                                   "by_role": _by_role(r, ev, authors, requester), "ranked": r[:8],
                                   "places": evidence_places(r, nb, ev, _matching(docs, ev, terms))})
    return rows


def summary_line(results: dict[str, Any]) -> str:
    s = results["systems"]

    def f(name: str, key: str) -> str:
        return f"{s[name]['1-4'][key]:.2f}"
    return (f"summary: R@8 hits={f('search_locomo', 'r8')}  BM25={f('bm25', 'r8')}  "
            f"context={f('search_locomo', 'ctx8')}  BM25+nb={f('bm25', 'ctx8')}  "
            f"(recent: R@8 hits={f('search_recent', 'r8')}  BM25={f('bm25', 'r8')})")


def _eval(args: argparse.Namespace, dsn: str) -> int:
    import psycopg

    from . import report

    say: Callable[[str], None] = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    started = time.monotonic()
    convs = locomo.load_dir(Path(args.data))
    if args.conversations:
        convs = convs[:args.conversations]
    prefix = args.prefix or f"eval-{secrets.token_hex(3)}"
    results: dict[str, Any] = {"started_at": datetime.now(timezone.utc).isoformat(), "data": str(args.data),
                     "limit": LIMIT, "neighbours_for_baselines": NEIGHBOURS,
                     "conversations": [c.name for c in convs]}
    stats: defaultdict[str, int] = defaultdict(int)
    for c in convs:
        for k, v in c.evidence_stats.items():
            stats[k] += v
        stats["turns"] += len(c.turns)
    stats["questions_scored"] = sum(1 for c in convs for q in c.questions if q.evidence)
    results["data_stats"] = dict(stats)
    with psycopg.connect(dsn, autocommit=True) as connection:
        conn: Any = connection
        results["server"] = conn.execute("SELECT version()").fetchone()[0]
        settings = dict(s.split("=", 1) for s in (args.setting or []))
        previous = _apply_settings(conn, settings)
        try:
            now = conn.execute("SELECT now()").fetchone()[0]
            loaded: dict[tuple[str, str], dict[str, Any]] = {}
            for conv in convs:
                for variant in VARIANTS:
                    shift = timedelta(0)
                    if variant == "recent":
                        shift = (now - timedelta(days=1)) - conv.turns[-1].sent_at
                    loaded[(variant, conv.name)] = load_conversation(conn, prefix, variant, conv, shift)
            say(f"loaded {len(convs)} conversations x {len(VARIANTS)} date variants "
                f"({stats['turns']} turns each) in {time.monotonic() - started:.1f}s")
            results["settings"] = conn.execute(
                "SELECT to_jsonb(s) - 'singleton' FROM history.search_settings s").fetchone()[0]
            per_question = _search_pass(conn, convs, loaded, say, "search")
            base = _baselines(conn, convs, loaded, restatement.Params.from_settings(results["settings"]))
            systems = {"search_locomo": per_question["locomo"], "search_recent": per_question["recent"], **base}
            results["systems"] = {k: _aggregate(v) for k, v in systems.items()}
            # the share of questions whose first 8 the restatement ranks exactly as search did
            results["restatement_agreement"] = round(sum(
                a["ranked"] == b["ranked"] for a, b in zip(systems["restatement"], systems["search_locomo"]))
                / max(len(systems["restatement"]), 1), 4)
            if args.ablation:
                results["ablation"] = {}
                for weight in _signal_weights(conn):
                    old = _apply_settings(conn, {weight: "0"})
                    try:
                        rows = _search_pass(conn, convs, loaded, say, f"without {weight}")
                    finally:
                        _apply_settings(conn, old)
                    results["ablation"][weight] = {v: _aggregate(r)["1-4"] for v, r in rows.items()}
        finally:
            _apply_settings(conn, previous)
    results["per_question"] = {k: [{x: r[x] for x in ("conversation", "index", "category", "requester", "r8",
                                                      "ctx8", "rr", "ranked", "places")} for r in v]
                               for k, v in systems.items()}
    results["seconds"] = round(time.monotonic() - started, 1)
    results["summary"] = summary_line(results)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.json").write_text(json.dumps(results, indent=1, default=str))
    (outdir / "results.md").write_text(report.render(results))
    png = report.chart(results, outdir / "chart.png")
    print(f"results: {outdir / 'results.json'}, {outdir / 'results.md'}")
    print(f"chart: {png}" if png else "chart: not written (matplotlib is not importable)")
    print(results["summary"])
    return 0


# ------------------------------------------------------------------ the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="directory of LoCoMo-format conversation files (*.json)")
    parser.add_argument("--dsn", default=None,
                        help="superuser DSN of a migrated database to load into (default: a throwaway cluster); "
                             "the data goes under a fresh id prefix, search_settings are restored at the end")
    parser.add_argument("--out", default="eval-out", help="directory for results.json, results.md and chart.png")
    parser.add_argument("--setting", action="append", metavar="COLUMN=VALUE",
                        help="set a history.search_settings column for this run (repeatable)")
    parser.add_argument("--ablation", action="store_true",
                        help="also rerun the searches with each nonzero component weight at 0")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N files")
    parser.add_argument("--prefix", default=None, help="id prefix of the loaded data (default: random)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace) -> int:
    if args.dsn:
        return _eval(args, args.dsn)
    import psycopg

    from ..cluster import ThrowawayCluster
    from ..migrations import apply_migrations

    with ThrowawayCluster() as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE history_eval")
        dsn = cluster.dsn_for("history_eval")
        apply_migrations(dsn)
        return _eval(args, dsn)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="history-search eval", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
