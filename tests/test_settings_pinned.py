"""Results and audit contents do not depend on the caller's session settings (docs/decisions.md).

The same search runs in two runs of the same turn: once from a session with
default settings, once from a session with every hostile setting a client role
may make. The hits (fetched in binary, so the client's own float and date
formatting plays no part), the neighbour JSON, the ranking reasons, the audit
row's stored numbers and filters, and the errors' texts must be identical.

Recency is weighted 0 here: it follows ``now()``, which differs between the
two calls; every other component is a fixed function of the world.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from history_search.client import _register_result_types

HOSTILE = [
    "extra_float_digits = -15",
    "DateStyle = 'SQL, DMY'",
    "IntervalStyle = sql_standard",
    "TimeZone = 'Pacific/Chatham'",
    "standard_conforming_strings = off",
    "escape_string_warning = off",
    "search_path = pg_temp, public",
    "default_text_search_config = 'pg_catalog.simple'",
    "array_nulls = off",
    "transform_null_equals = on",
    "bytea_output = escape",
    "lc_monetary = 'C'",
    "timezone_abbreviations = 'Australia'",
]

QUERY = "deploy window rollback checklist"


def build_world(admin: psycopg.Connection) -> list[str]:
    c = admin
    for account, kind in [("bot", "agent"), ("alice", "person"), ("alice-mail", "person"), ("bob", "person")]:
        c.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    c.execute("SELECT history.upsert_conversation('ops', 'group')")
    c.execute("SELECT history.upsert_conversation('dm', 'direct')")
    for conv, account in [("ops", "bot"), ("ops", "alice"), ("ops", "bob"), ("dm", "bot"), ("dm", "alice-mail")]:
        c.execute("SELECT history.add_member(%s, %s, '2026-01-01 00:00:00+00')", (conv, account))
    c.execute("SELECT history.link_identity('proof-1', 'alice', 'alice-mail', '2026-01-02 00:00:00+00')")
    bodies = [
        ("ops", "bob", "the deploy window opens at nine"),
        ("ops", "alice", "rollback checklist is in the wiki, deploy after review"),
        ("ops", "bob", "coffee first"),
        ("dm", "alice-mail", "my deploy checklist for the window: rollback plan, smoke tests, deploy"),
        ("ops", "alice", "window cleaning on friday"),
        ("ops", "bob", "rollback rollback rollback"),
        ("ops", "alice", "lunch?"),
        ("ops", "alice", "when is the deploy window?"),
    ]
    ids = []
    for i, (conv, author, body) in enumerate(bodies):
        ids.append(f"m{i}")
        c.execute("SELECT history.post_message(%s, %s, %s, %s, %s::timestamptz)",
                  (f"m{i}", conv, author, body, f"2026-02-0{i + 1} 10:{i:02d}:07.123456+00"))
    c.execute("UPDATE history.search_settings SET recency_weight = 0")
    return ids


SEARCH = "CALL history.search_history(%s, %s, 'anyone', %s::timestamptz, %s::timestamptz, 20)"

AUDIT = """
    SELECT query_digest, digest_key_id, speaker, sent_after, sent_before, effective_limit, query_term_count,
           hit_message_ids, selected_message_ids, hit_rankings::text, selections::text,
           excluded_speaker, excluded_time, excluded_perspective, excluded_audience, excluded_lineage,
           excluded_alive, excluded_in_context, excluded_budget, candidates_capped, status, budget_used,
           budget_remaining
      FROM history.conversation_search_events WHERE search_event_id = %s"""


def search(session: psycopg.Connection, admin: psycopg.Connection, run):
    _register_result_types(session)  # the client's loaders: the composite by field name
    r = session.cursor(binary=True).execute(
        SEARCH, (run, QUERY, "2026-02-01 00:00:00+00", "2026-03-01 00:00:00+00")).fetchone()[0]
    audit = admin.execute(AUDIT, (r["search_event_id"],)).fetchone()
    rows = [(r["status"], r["budget_used"], r["budget_remaining"], h["message_id"], h["conversation_id"],
             h["sent_at"], h["speaker_id"], h["speaker_role"], h["body"], h["score"],
             json.dumps(h["reasons"], sort_keys=True), json.dumps(h["before"]), json.dumps(h["after"]))
            for h in r["hits"]]
    return rows, audit


def error_text(session: psycopg.Connection, stmt: str, args=()) -> tuple:
    with pytest.raises(psycopg.Error) as err:
        session.execute(stmt, args)
    d = err.value.diag
    return d.sqlstate, d.message_primary, d.message_detail


def test_hostile_session_settings_change_no_result_no_audit_value_no_error(db_dsn, connect_as):
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        build_world(admin)
        runs = [admin.execute("SELECT history.begin_run('bot', 'ops', 'alice', 'm7', '{}', '{alice}')").fetchone()[0]
                for _ in range(2)]
        ended = admin.execute("SELECT history.begin_run('bot', 'ops', 'alice', 'm7')").fetchone()[0]
        admin.execute("SELECT history.end_run(%s)", (ended,))

        plain = connect_as("history_searcher")
        hostile = connect_as("history_searcher")
        for setting in HOSTILE:
            hostile.execute(f"SET {setting}")
        assert hostile.execute("SHOW extra_float_digits").fetchone()[0] == "-15"

        want_hits, want_audit = search(plain, admin, runs[0])
        got_hits, got_audit = search(hostile, admin, runs[1])
        assert len(want_hits) >= 3 and any(h[11] != "[]" or h[12] != "[]" for h in want_hits)
        # some scores with many digits (the best match scores a round 1.0 plus priors), so a rounded one would show
        assert any(len(repr(h[9])) > 8 for h in want_hits), [h[9] for h in want_hits]
        assert got_hits == want_hits
        assert got_audit == want_audit

        # The errors name their values the same way (times in UTC, ISO).
        for stmt, args in [
            ("CALL history.search_history(%s, 'x', 'anyone', '2026-02-02 10:00:00+00', '2026-02-01 09:30:00+00')",
             (runs[0],)),
            ("CALL history.search_history(%s, 'x')", (ended,)),
        ]:
            assert error_text(hostile, stmt, args) == error_text(plain, stmt, args)

    runtime_plain = connect_as("history_runtime")
    runtime_hostile = connect_as("history_runtime")
    for setting in HOSTILE:
        runtime_hostile.execute(f"SET {setting}")
    for stmt, args in [
        ("SELECT history.remove_member('ops', 'bob', '2025-12-31 23:00:00+00')", ()),
        ("SELECT history.end_run(%s)", (ended,)),
        ("SELECT history.revoke_proof('proof-1', '2026-02-20 00:00:00+00'), "
         "history.revoke_proof('proof-1', '2026-02-21 00:00:00+00')", ()),
    ]:
        want = error_text(runtime_plain, stmt, args)
        assert error_text(runtime_hostile, stmt, args) == want
        assert "Chatham" not in str(want) and "+12:45" not in str(want)


def test_no_search_statement_starts_parallel_workers(db_dsn):
    """A caller that makes parallel plans free still gets none inside search_history:
    worker start-up costs more than any of its bounded passes (docs/benchmarks.md)."""
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        build_world(admin)
        run = admin.execute("SELECT history.begin_run('bot', 'ops', 'alice', 'm7')").fetchone()[0]
        plans: list[str] = []
        admin.add_notice_handler(lambda d: plans.append(d.message_primary or ""))
        # auto_explain at WARNING: the level search_history lets through to the client.
        admin.execute("LOAD 'auto_explain'")
        for setting in ["auto_explain.log_min_duration = 0", "auto_explain.log_nested_statements = on",
                        "auto_explain.log_level = warning", "parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                        "min_parallel_table_scan_size = 0", "min_parallel_index_scan_size = 0",
                        "max_parallel_workers_per_gather = 4"]:
            admin.execute(f"SET {setting}")
        # The same session's own statements do go parallel: the settings bite.
        admin.execute("SELECT count(*) FROM history.message_search_documents WHERE document @@ 'deploy'")
        assert any("Gather" in p for p in plans), plans
        plans.clear()
        admin.execute(SEARCH, (run, QUERY, "2026-02-01 00:00:00+00", "2026-03-01 00:00:00+00"))
        searched = [p for p in plans if "_newest_matches" in p or "message_search_documents" in p]
        assert searched, plans
        assert not [p for p in plans if "Gather" in p or "Parallel" in p]
