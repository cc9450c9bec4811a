#!/usr/bin/env python3
"""Time erase_account and purge on a built world, with searches of other runs running meanwhile.

    .venv/bin/python scripts/bench_lifecycle.py [--messages 100000] [--audit-rows 1000000] [--dsn URL]

Builds (set-based, as the owner) an account that wrote --messages messages
among as many by others, and ended runs holding about --audit-rows audit rows
(search events, evidence and trace); then times history.erase_account and
history.purge while two loops search: one as a run of another agent whose
conversations the erased account never wrote in, one as a run whose
candidates include the erased account's messages. Prints one line per
figure (docs/lifecycle.md shows the current ones). Without --dsn it uses a
throwaway cluster.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pyclient"))

CALL = ("CALL history.search_history(%s::uuid, %s::text, NULL::text, NULL::timestamptz, NULL::timestamptz, "
        "NULL::integer, NULL)")
WORDS = ("deploy budget invoice roadmap kickoff outage retro launch hiring design review metrics pricing "
         "security onboarding migration backlog sprint incident partner").split()


def build(conn: psycopg.Connection, messages: int, audit_rows: int) -> None:
    q = conn.execute
    q("SET ROLE history_owner")
    t0 = time.monotonic()
    q("SELECT history.upsert_account('bot', 'agent'), history.upsert_account('bot2', 'agent'), "
      "history.upsert_account('leaver', 'person', 'Lea Ver')")
    q("SELECT history.upsert_account('p' || i, 'person') FROM generate_series(0, 19) i")
    q("SELECT history.upsert_conversation('c' || i, 'group') FROM generate_series(0, 19) i")
    # c0..c9: leaver, bot and p0..p9; c10..c19: bot2 and p10..p19 (never leaver). The leaver writes c0..c7.
    q("""SELECT history.add_member('c' || c, a, '2025-01-01+00')
           FROM generate_series(0, 19) c,
                LATERAL (SELECT unnest(CASE WHEN c < 10 THEN ARRAY['leaver', 'bot'] ELSE ARRAY['bot2'] END
                                       || ARRAY(SELECT 'p' || i FROM generate_series(c / 10 * 10, c / 10 * 10 + 9) i))) m(a)""")
    words = "ARRAY[" + ",".join(f"'{w}'" for w in WORDS) + "]"
    with conn.transaction():  # current_event_key is checked at commit
        q(f"""
            INSERT INTO history.messages (message_id, conversation_key, author_key, sent_at, current_event_key)
            SELECT 'm' || i, c.conversation_key, a.account_key,
                   '2025-06-01+00'::timestamptz + i * interval '1 minute', 0
              FROM generate_series(1, %s) i
              JOIN history.conversations c ON c.conversation_id = 'c' || (i %% 20)
              JOIN history.accounts a ON a.account_id = CASE WHEN i %% 20 < 8 THEN 'leaver' ELSE 'p' || (i %% 20) END""",
          (messages * 20 // 8,))
        q(f"""
            INSERT INTO history.message_events (message_key, event_kind, body, occurred_at)
            SELECT m.message_key, 'created',
                   ({words})[1 + m.message_key % 20] || ' ' || ({words})[1 + (m.message_key / 20) % 20] || ' note ' || m.message_key,
                   m.sent_at
              FROM history.messages m""")
        q("UPDATE history.messages m SET current_event_key = e.event_key FROM history.message_events e "
          "WHERE e.message_key = m.message_key")
    q("""INSERT INTO history.conversation_authors (conversation_key, author_key)
         SELECT DISTINCT conversation_key, author_key FROM history.messages""")
    q("""INSERT INTO history.message_search_documents
             (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
         SELECT m.message_key, m.tenant_key, m.message_id, m.conversation_key, m.author_key, m.sent_at, false,
                history._document_vector(e.body, c.language)
           FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
           JOIN history.conversations c ON c.conversation_key = m.conversation_key""")
    leaver = q("SELECT count(*) FROM history.messages m JOIN history.accounts a ON a.account_key = m.author_key "
               "WHERE a.account_id = 'leaver'").fetchone()[0]
    print(f"world: {messages * 20 // 8} messages, {leaver} by the account to erase ({time.monotonic() - t0:.0f} s)")

    # Ended runs, each with 10 searches (events), 10 trace entries, 30 evidence rows: 50 audit rows a run.
    t0 = time.monotonic()
    runs = audit_rows // 50
    q("""INSERT INTO history.runs (agent_key, conversation_key, requester_key, current_message_key, audience_keys,
                                   started_at, ended_at)
         SELECT a.account_key, c.conversation_key, p.account_key, 1, ARRAY[p.account_key],
                now() - interval '90 days' + r * interval '1 second', now() - interval '90 days' + r * interval '1 second' + interval '1 minute'
           FROM generate_series(1, %s) r, history.accounts a, history.accounts p, history.conversations c
          WHERE a.account_id = 'bot2' AND p.account_id = 'p10' AND c.conversation_id = 'c10'""", (runs,))
    q("""INSERT INTO history.conversation_search_events
             (run_key, agent_key, searched_at, query_digest, digest_key_id, speaker, effective_limit, query_term_count,
              hit_message_ids, selected_message_ids, hit_rankings, selections, excluded_speaker, excluded_time,
              excluded_perspective, excluded_audience, excluded_lineage, excluded_alive, excluded_in_context,
              excluded_budget, candidates_capped, status, budget_used, budget_remaining)
         SELECT r.run_key, r.agent_key, r.started_at + s * interval '1 second', '\\x00', 1, 'anyone', 8, 2,
                '{}', '{}', '[]', '[]', 0, 0, 0, 0, 0, 0, 0, 0, false, 'ok', 3 * s, 400 - 3 * s
           FROM history.runs r, generate_series(1, 10) s""")
    q("""INSERT INTO history.run_trace (run_key, entry_kind, event_key)
         SELECT e.run_key, 'search_audit', e.event_key FROM history.conversation_search_events e""")
    q("""INSERT INTO history.run_evidence (run_key, message_key, event_key)
         SELECT e.run_key, 1 + (e.event_key * 3 + k) % (SELECT max(message_key) FROM history.messages), e.event_key
           FROM history.conversation_search_events e, generate_series(0, 2) k""")
    total = q("""SELECT (SELECT count(*) FROM history.conversation_search_events) + (SELECT count(*) FROM history.run_trace)
                        + (SELECT count(*) FROM history.run_evidence)""").fetchone()[0]
    print(f"audit: {runs} ended runs, {total} audit rows (events, trace, evidence) ({time.monotonic() - t0:.0f} s)")
    q("RESET ROLE")
    q("VACUUM ANALYZE")


class SearchLoop(threading.Thread):
    """Searches as one run after another of an agent, recording each search's latency."""

    def __init__(self, dsn: str, agent: str, conversation: str, requester: str, current: str, queries: list[str]):
        super().__init__(daemon=True)
        self.dsn, self.agent, self.conversation, self.requester, self.current = dsn, agent, conversation, requester, current
        self.queries = queries
        self.samples: list[tuple[float, float]] = []  # (start, seconds)
        self.stop = threading.Event()

    def run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            n = 0
            while not self.stop.is_set():
                run = conn.execute("SELECT history.begin_run(%s, %s, %s, %s)",
                                   (self.agent, self.conversation, self.requester, self.current)).fetchone()[0]
                for _ in range(10):
                    start = time.monotonic()
                    conn.execute(CALL, (run, self.queries[n % len(self.queries)]))
                    self.samples.append((start, time.monotonic() - start))
                    n += 1
                conn.execute("SELECT history.end_run(%s)", (run,))

    def during(self, t0: float, t1: float) -> list[float]:
        return [s for start, s in self.samples if start < t1 and start + s > t0]


def report(name: str, loop: SearchLoop, t0: float, t1: float) -> None:
    before = [s for start, s in loop.samples if start < t0]
    during = loop.during(t0, t1)
    if during:
        print(f"  searches of {name}: {len(during)} during, max {max(during) * 1000:.0f} ms, "
              f"median {statistics.median(during) * 1000:.0f} ms (median before: "
              f"{statistics.median(before) * 1000 if before else float('nan'):.0f} ms)")
    else:
        print(f"  searches of {name}: none completed during it")


def measure(dsn: str, messages: int, audit_rows: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        build(conn, messages, audit_rows)
        other = SearchLoop(dsn, "bot2", "c10", "p10", "m10", WORDS)
        same = SearchLoop(dsn, "bot", "c8", "p8", "m28", WORDS)
        for loop in (other, same):
            loop.start()
        time.sleep(5)

        t0 = time.monotonic()
        erased = conn.execute("SELECT history.erase_account('leaver', now())").fetchone()[0]
        t1 = time.monotonic()
        print(f"erase_account: {erased} messages in {t1 - t0:.1f} s")
        report("another agent's run (conversations the account never wrote in)", other, t0, t1)
        report("a run whose candidates include the account's messages", same, t0, t1)
        time.sleep(3)

        batches: list[float] = []
        last = [time.monotonic()]

        def on_notice(n: psycopg.errors.Diagnostic) -> None:
            now = time.monotonic()
            batches.append(now - last[0])
            last[0] = now

        conn.add_notice_handler(on_notice)
        t0 = last[0] = time.monotonic()
        conn.execute("CALL history.purge(now() - interval '30 days')")
        t1 = time.monotonic()
        print(f"purge: {audit_rows // 50} runs, about {audit_rows} audit rows in {t1 - t0:.1f} s, "
              f"{len(batches) - 1} batches of 500 runs, longest batch {max(batches[:-1]) * 1000:.0f} ms")
        report("another agent's run", other, t0, t1)
        report("a run in the erased account's conversations", same, t0, t1)
        for loop in (other, same):
            loop.stop.set()
            loop.join(30)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=100_000, help="messages of the account to erase")
    p.add_argument("--audit-rows", type=int, default=1_000_000)
    p.add_argument("--dsn", help="superuser URL of an empty database (default: a throwaway cluster)")
    args = p.parse_args()
    if args.dsn:
        measure(args.dsn, args.messages, args.audit_rows)
        return 0
    from history_search.cluster import ThrowawayCluster
    from history_search.migrations import apply_migrations

    with ThrowawayCluster() as cluster:
        admin = psycopg.connect(cluster.dsn, autocommit=True)
        admin.execute("CREATE DATABASE lifecycle")
        dsn = cluster.dsn_for("lifecycle")
        apply_migrations(dsn)
        measure(dsn, args.messages, args.audit_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
