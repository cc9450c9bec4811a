#!/usr/bin/env python3
"""Ingest through post_message on a Citus coordinator against one node (docs/scale-out.md, "Benchmarks").

    .venv/bin/python scripts/citus_ingest.py [--tenants 100] [--clients 2] [--seconds 20]

Starts a throwaway Citus cluster (a coordinator and two workers, all on this
machine) and a throwaway single server; migrates both, distributes the
Citus one; creates the same tenants in both through the runtime API (each: an
agent, four people, three conversations, memberships); then ``clients``
connections post messages (one transaction each, into a random tenant) for
``seconds`` and it prints messages/s and latency for each, and the CPU time
each server's processes spent per message (which, unlike the rate, hardly
depends on what else the machine runs). Needs Citus installed into the
server's PostgreSQL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pyclient"))

import psycopg  # noqa: E402

from history_search.citus_cluster import ThrowawayCitusCluster  # noqa: E402
from history_search.cluster import ThrowawayCluster  # noqa: E402
from history_search.distribute import distribute  # noqa: E402
from history_search.migrations import apply_migrations  # noqa: E402

WORDS = ("atlas launch date review security billing export customer onboarding latency "
         "migration rollout budget forecast incident postmortem dashboard pipeline release "
         "contract renewal pricing roadmap hiring interview offsite travel visa vendor").split()


def populate(dsn: str, tenants: int) -> list[tuple[str, str, str]]:
    """Each tenant's world; the (tenant, conversation, author) triples a post may use."""
    since = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    pairs = []
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SET ROLE history_runtime")
        for t in range(tenants):
            tenant = f"tenant-{t:03d}"
            with c.transaction():
                c.execute("SELECT history.upsert_account('helper', 'agent', 'Helper', %s)", (tenant,))
                people = [f"person-{i}" for i in range(4)]
                for p in people:
                    c.execute("SELECT history.upsert_account(%s, 'person', %s, %s)", (p, p.title(), tenant))
                for k, kind in enumerate(("channel", "group", "group")):
                    conv = f"conv-{k}"
                    c.execute("SELECT history.upsert_conversation(%s, %s, %s, NULL, %s)", (conv, kind, conv, tenant))
                    for a in ["helper", *people]:
                        c.execute("SELECT history.add_member(%s, %s, %s, %s)", (conv, a, since, tenant))
                        if a != "helper":
                            pairs.append((tenant, conv, a))
    return pairs


_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from the state on (field 3)


def server_cpu_s(node: ThrowawayCluster) -> float:
    """CPU seconds of a server's processes so far: the postmaster's own and its reaped
    children's (cutime, cstime), plus each live child's."""
    postmaster = (node.data_dir / "postmaster.pid").read_text().split()[0]
    pm = _stat(postmaster)
    assert pm is not None
    total = sum(int(x) for x in pm[11:15])  # utime, stime, cutime, cstime
    for pid in filter(str.isdigit, os.listdir("/proc")):
        st = _stat(pid)
        if st is not None and st[1] == postmaster:  # ppid
            total += int(st[11]) + int(st[12])
    return total / _TICK


def ingest(dsn: str, pairs: list, clients: int, seconds: float, label: str,
           nodes: dict[str, ThrowawayCluster] | None = None) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker(w: int) -> None:
        r = random.Random(f"{label}-{w}")
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SET ROLE history_runtime")
                i = 0
                while time.monotonic() < deadline:
                    tenant, conv, author = r.choice(pairs)
                    body = " ".join(r.choices(WORDS, k=r.randint(4, 24)))
                    at = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
                    t0 = time.perf_counter()
                    conn.execute("SELECT history.post_message(%s, %s, %s, %s, %s, '{}', %s)",
                                 (f"{label}-{w}-{i}", conv, author, body, at, tenant))
                    with lock:
                        lat.append((time.perf_counter() - t0) * 1000)
                    i += 1
        except Exception as e:  # reported, not swallowed
            errors.append(f"{type(e).__name__}: {e}")

    nodes = nodes or {}
    cpu_before = {name: server_cpu_s(node) for name, node in nodes.items()}
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    time.sleep(0.5)  # the sessions' backends exit (and are counted)
    cpu_ms = {name: round(1000 * (server_cpu_s(node) - cpu_before[name]) / max(1, len(lat)), 3)
              for name, node in nodes.items()}
    if errors:
        raise SystemExit(f"{label}: " + "; ".join(errors[:3]))
    lat.sort()
    return {"where": label, "clients": clients, "messages": len(lat), "wall_s": round(wall, 1),
            "messages_per_s": round(len(lat) / wall), "p50_ms": round(statistics.median(lat), 2),
            "p99_ms": round(lat[int(0.99 * (len(lat) - 1))], 2),
            "server_cpu_ms_per_message": cpu_ms, "load_average": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tenants", type=int, default=100)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    results = []
    with ThrowawayCluster() as single:
        with psycopg.connect(single.dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE ingest")
        dsn = single.dsn_for("ingest")
        apply_migrations(dsn)
        pairs = populate(dsn, args.tenants)
        results.append(ingest(dsn, pairs, args.clients, args.seconds, "one node", {"server": single}))
    with ThrowawayCitusCluster(workers=2) as citus:
        dsn = citus.create_database("ingest")
        apply_migrations(dsn)
        distribute(dsn)
        pairs = populate(dsn, args.tenants)
        results.append(ingest(dsn, pairs, args.clients, args.seconds, "Citus coordinator",
                              {"coordinator": citus.coordinator, "worker 1": citus.workers[0],
                               "worker 2": citus.workers[1]}))
        with psycopg.connect(dsn, autocommit=True) as c:
            spread = c.execute(
                """SELECT p.nodeport::text, count(DISTINCT t.tenant_key)
                     FROM history.tenants t
                     JOIN pg_dist_shard_placement p
                       ON p.shardid = get_shard_id_for_distribution_column('history.messages', t.tenant_key)
                    GROUP BY 1 ORDER BY 1""").fetchall()
        results.append({"where": "tenants per worker", "spread": dict(spread)})
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
