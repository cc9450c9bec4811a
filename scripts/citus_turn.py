#!/usr/bin/env python3
"""An agent's turn, call by call, on a Citus coordinator against one node (docs/scale-out.md, "The reply on Citus").

    .venv/bin/python scripts/citus_turn.py [--tenants 20] [--messages 60] [--turns 150]

Starts a throwaway single server and a throwaway Citus cluster (a coordinator
and two workers, all on this machine); migrates both, distributes the Citus
one; creates the same tenants in both through the runtime API (as
scripts/citus_ingest.py does) with ``messages`` messages per tenant; then
plays ``turns`` turns, one after the other, each in a random tenant: a
person's message, ``begin_run``, one search (two words; its hits and their
neighbours are the run's evidence) and ``record_reply`` (the delivery check
over that evidence, the reply posted with it as its sources). It prints each
call's median latency in ms (the first 10 turns warm up and are not counted)
and the evidence a reply carried. Needs Citus installed into the server's
PostgreSQL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pyclient"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402

from citus_ingest import WORDS, populate  # noqa: E402
from history_search import Search  # noqa: E402
from history_search.citus_cluster import ThrowawayCitusCluster  # noqa: E402
from history_search.cluster import ThrowawayCluster  # noqa: E402
from history_search.distribute import distribute  # noqa: E402
from history_search.migrations import apply_migrations  # noqa: E402

WARM_UP = 10


def world(dsn: str, tenants: int, messages: int) -> list[tuple[str, str, str]]:
    pairs = populate(dsn, tenants)
    r = random.Random(1)
    start = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SET ROLE history_runtime")
        for i in range(tenants * messages):
            tenant, conversation, author = r.choice(pairs)
            c.execute("SELECT history.post_message(%s, %s, %s, %s, %s, '{}', %s)",
                      (f"m-{i}", conversation, author, " ".join(r.choices(WORDS, k=8)),
                       start + dt.timedelta(minutes=i), tenant))
    return pairs


def turns(dsn: str, pairs: list[tuple[str, str, str]], count: int, where: str) -> dict:
    r = random.Random(2)
    took: dict[str, list[float]] = {"begin_run": [], "search": [], "record_reply": []}
    evidence: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as rc, psycopg.connect(dsn, autocommit=True) as sc:
        rc.execute("SET ROLE history_runtime")
        sc.execute("SET ROLE history_searcher")
        for i in range(count):
            tenant, conversation, author = r.choice(pairs)
            rc.execute("SELECT history.post_message(%s, %s, %s, 'a question', now() - interval '1 s', '{}', %s)",
                       (f"ask-{i}", conversation, author, tenant))
            t0 = time.perf_counter()
            run = rc.execute("SELECT history.begin_run('helper', %s, %s, %s, '{}', NULL, %s)",
                             (conversation, author, f"ask-{i}", tenant)).fetchone()[0]
            t1 = time.perf_counter()
            found = Search(sc, run).search(" ".join(r.choices(WORDS, k=2)))
            t2 = time.perf_counter()
            rc.execute("SELECT history.record_reply(%s, %s, 'an answer', now())", (run, f"reply-{i}"))
            t3 = time.perf_counter()
            if i >= WARM_UP:
                for call, ms in zip(took, ((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)):
                    took[call].append(ms)
                evidence.append(found.budget_used)
    return {"where": where, "turns": count - WARM_UP,
            **{f"{call} p50 ms": round(statistics.median(ms), 2) for call, ms in took.items()},
            "evidence per reply (mean)": round(statistics.mean(evidence), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tenants", type=int, default=20)
    ap.add_argument("--messages", type=int, default=60, help="messages per tenant")
    ap.add_argument("--turns", type=int, default=150)
    args = ap.parse_args()
    results = []
    with ThrowawayCluster() as single:
        with psycopg.connect(single.dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE turn")
        dsn = single.dsn_for("turn")
        apply_migrations(dsn)
        results.append(turns(dsn, world(dsn, args.tenants, args.messages), args.turns, "one node"))
    with ThrowawayCitusCluster(workers=2) as citus:
        dsn = citus.create_database("turn")
        apply_migrations(dsn)
        distribute(dsn)
        results.append(turns(dsn, world(dsn, args.tenants, args.messages), args.turns, "Citus coordinator"))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
