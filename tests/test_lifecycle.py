"""The life of a deployment: erasing an account, purging old audit, the status view.

Real PostgreSQL throughout; the world is written through the SQL surface.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from psycopg import sql

from .harness import call_search, wait_until_blocked

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)

# Alice's words, and the stems or lexemes an analysis would make of them: none
# may remain anywhere once she is erased. No other account writes them.
ALICE_WORDS = ["quixotic", "aardvark", "xylophone", "marzipan", "nebulous", "zephyrine"]
ALICE_STEMS = ["quixot", "aardvark", "xylophon", "marzipan", "nebul", "zephyrin"]


def t(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def build_world(conn: psycopg.Connection) -> None:
    """A group g (bot, alice, bob), a channel pub (bot, bob, carol) holding bob's
    summary of alice's message, and a direct conversation d (bot, carol)."""
    q = conn.execute
    q("SELECT history.upsert_account('bot', 'agent', 'Helper')")
    q("SELECT history.upsert_account('alice', 'person', 'Alice Zephyrine')")
    q("SELECT history.upsert_account('bob', 'person', 'Bob')")
    q("SELECT history.upsert_account('carol', 'person', 'Carol')")
    q("SELECT history.upsert_conversation('g', 'group', 'planning')")
    q("SELECT history.upsert_conversation('pub', 'channel', 'news')")
    q("SELECT history.upsert_conversation('d', 'direct', NULL)")
    for conv, who in [("g", "bot"), ("g", "alice"), ("g", "bob"), ("pub", "bot"), ("pub", "bob"),
                      ("pub", "carol"), ("d", "bot"), ("d", "carol")]:
        q("SELECT history.add_member(%s, %s, %s)", (conv, who, T0 - timedelta(days=1)))
    post = "SELECT history.post_message(%s, %s, %s, %s, %s, %s)"
    q(post, ("b1", "g", "bob", "kickoff meeting tomorrow", t(1), []))
    q(post, ("a1", "g", "alice", "quixotic aardvark plans", t(2), []))
    q(post, ("a2", "g", "alice", "marzipan for the kickoff party", t(3), []))
    q(post, ("a3", "g", "alice", "nebulous kickoff agenda", t(4), []))
    q(post, ("b2", "g", "bob", "kickoff retro notes", t(5), []))
    q("SELECT history.edit_message('a1', 'quixotic aardvark plans with a xylophone kickoff', %s)", (t(6),))
    q("SELECT history.delete_message('a2', %s)", (t(7),))
    # Derived from alice's a1 (bob's own words): it keeps a1's restrictions.
    q(post, ("b3", "pub", "bob", "summary of the offsite plans", t(8), ["a1"]))
    q(post, ("now-g", "g", "bob", "what was planned?", t(20), []))
    q(post, ("now-d", "d", "carol", "anything about the offsite?", t(21), []))
    q(post, ("now-pub", "pub", "bob", "anything about the offsite?", t(22), []))


def begin_run(conn, conversation, requester, current, audience=None) -> str:
    return conn.execute("SELECT history.begin_run('bot', %s, %s, %s, '{}', %s)",
                        (conversation, requester, current, audience)).fetchone()[0]


def text_columns(conn) -> list[tuple[str, str]]:
    """Every text, jsonb, tsvector and array column of every table of schema history."""
    return conn.execute("""
        SELECT c.relname::text, a.attname::text
          FROM pg_catalog.pg_attribute a
          JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
          JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
         WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p', 'm')
           AND a.attnum > 0 AND NOT a.attisdropped
           AND (ty.typcategory IN ('S', 'A') OR ty.oid IN ('jsonb'::regtype, 'json'::regtype, 'tsvector'::regtype))
         ORDER BY 1, 2""").fetchall()


def find_words(conn, words) -> set[tuple[str, str, str]]:
    """(table, column, word) for each word found (case-insensitively) in a text-bearing column."""
    found = set()
    for table, column in text_columns(conn):
        for word in words:
            hit = conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM history.{} WHERE {}::text ILIKE %s)")
                               .format(sql.Identifier(table), sql.Identifier(column)), (f"%{word}%",)).fetchone()[0]
            if hit:
                found.add((table, column, word))
    return found


def hit_ids(result) -> list[str]:
    return [h["message_id"] for h in result["hits"] or []]


def neighbour_ids(result) -> dict[str, list[str]]:
    return {h["message_id"]: [n["message_id"] for n in (h["before"] or []) + (h["after"] or [])]
            for h in result["hits"] or []}


# -- erasure --------------------------------------------------------------------------------------


def test_erasure_leaves_no_word_of_the_account_anywhere(conn):
    build_world(conn)
    run = begin_run(conn, "g", "bob", "now-g")
    before = call_search(conn, run, "quixotic kickoff")
    assert "a1" in hit_ids(before)
    # The scan can see the words: before erasure they are in bodies, documents and name terms.
    found = find_words(conn, ALICE_WORDS + ALICE_STEMS)
    assert {("message_events", "body"), ("message_search_documents", "document"), ("accounts", "display_name"),
            ("accounts", "name_terms")} <= {(t, c) for t, c, _ in found}

    erased = conn.execute("SELECT history.erase_account('alice', %s)", (t(30),)).fetchone()[0]
    assert erased == 3  # a1 (created and edited), a2 (deleted before), a3

    assert find_words(conn, ALICE_WORDS + ALICE_STEMS) == set()
    # The placeholders keep id, conversation, author and time; the deleted a2 keeps its one deletion.
    rows = conn.execute("""
        SELECT m.message_id, c.conversation_id, a.account_id, m.sent_at, e.event_kind, e.occurred_at
          FROM history.messages m JOIN history.conversations c ON c.conversation_key = m.conversation_key
          JOIN history.accounts a ON a.account_key = m.author_key
          JOIN history.message_events e ON e.event_key = m.current_event_key
         WHERE a.account_id = 'alice' ORDER BY m.message_id""").fetchall()
    assert rows == [("a1", "g", "alice", t(2), "deleted", t(30)), ("a2", "g", "alice", t(3), "deleted", t(7)),
                    ("a3", "g", "alice", t(4), "deleted", t(30))]
    assert conn.execute("""SELECT count(*) FROM history.message_events e JOIN history.messages m USING (message_key)
                            WHERE m.message_id LIKE 'a%%' AND e.body IS NOT NULL""").fetchone()[0] == 0
    log = conn.execute("""SELECT a.account_id, x.erased_at, x.messages_erased, x.events_erased, x.requested_by = session_user
                            FROM history.account_erasures x JOIN history.accounts a USING (account_key)""").fetchall()
    assert log == [("alice", t(30), 3, 4, True)]


def test_erased_messages_are_gone_from_search_neighbours_and_delivery(conn):
    build_world(conn)
    old_run = begin_run(conn, "g", "bob", "now-g")
    got = call_search(conn, old_run, "quixotic")
    assert hit_ids(got) == ["a1"]
    kick = call_search(conn, begin_run(conn, "g", "bob", "now-g"), "kickoff retro")
    assert "a3" in neighbour_ids(kick)["b2"]  # alice's message is b2's neighbour before erasure
    assert conn.execute("SELECT * FROM history.check_delivery(%s)", (old_run,)).fetchall() == []

    conn.execute("SELECT history.erase_account('alice', %s)", (t(30),))

    run = begin_run(conn, "g", "bob", "now-g")
    for query in ALICE_WORDS:
        assert hit_ids(call_search(conn, run, query)) == [], query
    kick = call_search(conn, run, "kickoff retro")
    assert hit_ids(kick)[0] == "b2"
    assert neighbour_ids(kick)["b2"] == ["b1"]  # a3, a2, a1 skipped: not eligible
    # Evidence resting on an erased message (a1 the hit, a3 its neighbour) fails delivery as deleted.
    assert "a3" in neighbour_ids(got)["a1"]
    assert conn.execute("SELECT * FROM history.check_delivery(%s)", (old_run,)).fetchall() == [
        ("a1", "deleted"), ("a3", "deleted")]


def test_a_reply_derived_from_erased_messages_keeps_their_restrictions(conn):
    build_world(conn)
    conn.execute("SELECT history.erase_account('alice', %s)", (t(30),))
    # carol never was in g, where b3's source a1 was written: b3 stays hidden from her.
    hidden = call_search(conn, begin_run(conn, "d", "carol", "now-d"), "summary")
    assert hit_ids(hidden) == []
    assert conn.execute("SELECT excluded_lineage FROM history.search_audit WHERE search_event_id = %s",
                        (hidden["search_event_id"],)).fetchone()[0] == 1
    # bob (a member of g) still sees it.
    assert hit_ids(call_search(conn, begin_run(conn, "pub", "bob", "now-pub", ["bob"]), "summary")) == ["b3"]


def test_erasure_is_idempotent_and_refuses_writes_to_the_placeholders(conn):
    build_world(conn)
    assert conn.execute("SELECT history.erase_account('alice', %s)", (t(30),)).fetchone()[0] == 3
    snapshot = conn.execute("""SELECT array_agg(row(e.*)::text ORDER BY e.event_key) FROM history.message_events e""").fetchone()[0]
    assert conn.execute("SELECT history.erase_account('alice', %s)", (t(31),)).fetchone()[0] == 0
    assert conn.execute("""SELECT array_agg(row(e.*)::text ORDER BY e.event_key) FROM history.message_events e""").fetchone()[0] == snapshot
    assert conn.execute("SELECT array_agg(messages_erased ORDER BY erasure_key) FROM history.account_erasures").fetchone()[0] == [3, 0]
    for stmt, args in [("SELECT history.edit_message('a1', 'back again', %s)", (t(32),)),
                       ("SELECT history.delete_message('a3', %s)", (t(32),)),
                       ("SELECT history.post_message('a1', 'g', 'alice', 'quixotic aardvark plans', %s)", (t(2),))]:
        with pytest.raises(psycopg.Error) as e:
            conn.execute(stmt, args)
        assert e.value.sqlstate == "HS004", stmt


def erase_while(conn, db_dsn, statement, args) -> int:
    """Run ``statement`` in an open transaction, start erasing alice, commit the
    statement once the erasure waits for it; return what the erasure returned."""
    writer = psycopg.connect(db_dsn)
    writer.execute(statement, args)
    eraser = psycopg.connect(db_dsn, autocommit=True)
    pid = eraser.info.backend_pid
    out: list = []
    th = threading.Thread(target=lambda: out.append(
        eraser.execute("SELECT history.erase_account('alice', %s)", (t(30),)).fetchone()[0]))
    th.start()
    wait_until_blocked(conn, pid, "the erasure", timeout_s=10)
    writer.commit()
    th.join(30)
    writer.close()
    eraser.close()
    return out[0]


def test_erasure_catches_a_concurrent_edit_and_a_concurrent_post(conn, db_dsn):
    build_world(conn)
    # An edit in flight when the erasure starts: its body is erased too, and its message counts as deleted.
    assert erase_while(conn, db_dsn, "SELECT history.edit_message('a3', 'xylophone encore', %s)", (t(25),)) == 3
    assert find_words(conn, ALICE_WORDS + ALICE_STEMS) == set()
    assert conn.execute("""SELECT e.event_kind FROM history.messages m JOIN history.message_events e
                             ON e.event_key = m.current_event_key WHERE m.message_id = 'a3'""").fetchone()[0] == "deleted"
    # A post by the account in flight: the erasure waits for it, then erases it.
    assert erase_while(conn, db_dsn, "SELECT history.post_message('a9', 'g', 'alice', 'marzipan again', %s)",
                       (t(26),)) == 1
    assert find_words(conn, ALICE_WORDS + ALICE_STEMS) == set()


def test_erasure_bad_input_is_an_hs_error_and_changes_nothing(conn):
    build_world(conn)
    for args, state, named in [(("nobody", t(30)), "HS003", "nobody"), (("alice", None), "HS001", "p_at"),
                               ((None, t(30)), "HS001", "p_account_id"), (("alice", "infinity"), "HS001", "infinity")]:
        with pytest.raises(psycopg.Error) as e:
            conn.execute("SELECT history.erase_account(%s, %s)", args)
        assert e.value.sqlstate == state, args
        assert named in e.value.diag.message_primary, args
    assert len(find_words(conn, ["quixotic"])) > 0
    assert conn.execute("SELECT count(*) FROM history.account_erasures").fetchone()[0] == 0


def test_erasure_is_runtime_only(connect_as, conn):
    build_world(conn)
    for role in ("history_searcher", "history_auditor"):
        with connect_as(role) as c, pytest.raises(psycopg.Error) as e:
            c.execute("SELECT history.erase_account('alice', %s)", (t(30),))
        assert e.value.sqlstate == "42501"
    with connect_as("history_runtime") as c:
        assert c.execute("SELECT history.erase_account('alice', %s)", (t(30),)).fetchone()[0] == 3


def test_client_runtime_erase_account(db_dsn, conn):
    from history_search import Runtime

    build_world(conn)
    with psycopg.connect(db_dsn, autocommit=True) as c:
        assert Runtime(c).erase_account("alice", t(30)) == 3
    assert find_words(conn, ["quixotic"]) == set()


def test_async_client_erase_account(db_dsn, conn):
    import asyncio

    from history_search import AsyncRuntime

    build_world(conn)

    async def erase() -> int:
        async with await psycopg.AsyncConnection.connect(db_dsn, autocommit=True) as c:
            return await AsyncRuntime(c).erase_account("alice", t(30))

    assert asyncio.run(erase()) == 3
    assert find_words(conn, ["quixotic"]) == set()


# -- purge ----------------------------------------------------------------------------------------


def audit_rows(conn) -> dict[str, set]:
    return {
        "runs": set(conn.execute("SELECT run_key FROM history.runs").fetchall()),
        "events": set(conn.execute("SELECT event_key, run_key FROM history.conversation_search_events").fetchall()),
        "evidence": set(conn.execute("SELECT run_key, message_key FROM history.run_evidence").fetchall()),
        "trace": set(conn.execute("SELECT trace_key, run_key FROM history.run_trace").fetchall()),
    }


def rows_of(rows: dict[str, set], runs: set) -> dict[str, set]:
    """The rows of ``rows`` that belong to the given run keys."""
    return {"runs": {r for r in rows["runs"] if r[0] in runs},
            **{k: {r for r in rows[k] if r[-1 if k != "evidence" else 0] in runs} for k in ("events", "trace")},
            "evidence": {r for r in rows["evidence"] if r[0] in runs}}


def run_key(conn, token) -> int:
    return conn.execute("SELECT run_key FROM history.runs WHERE run_token = %s", (token,)).fetchone()[0]


def purge_world(conn):
    """Runs on both sides of a cut-off: ended before it (old), open since before it,
    ended after it, and open after it; each with searches, evidence and trace."""
    build_world(conn)
    old = []
    for i in range(4):
        r = begin_run(conn, "g", "bob", "now-g")
        call_search(conn, r, "kickoff")
        call_search(conn, r, "plans")
        conn.execute("SELECT history.end_run(%s)", (r,))
        old.append(run_key(conn, r))
    open_early = begin_run(conn, "g", "bob", "now-g")
    call_search(conn, open_early, "kickoff")
    time.sleep(0.01)
    cutoff = conn.execute("SELECT clock_timestamp()").fetchone()[0]
    time.sleep(0.01)
    late = begin_run(conn, "g", "bob", "now-g")
    call_search(conn, late, "kickoff")
    conn.execute("SELECT history.end_run(%s)", (late,))
    open_late = begin_run(conn, "pub", "bob", "now-pub")
    call_search(conn, open_late, "offsite")
    return cutoff, old, {run_key(conn, x) for x in (open_early, late, open_late)}


def test_purge_removes_exactly_the_ended_runs_before_the_cutoff_and_resumes(conn, db_dsn):
    cutoff, old, kept = purge_world(conn)
    everything = audit_rows(conn)
    assert all(rows_of(everything, {k})[part] for k in old for part in ("events", "evidence", "trace"))

    # Interrupt the purge in its second batch: hold a row it must delete, then cancel it.
    blocker = psycopg.connect(db_dsn)
    blocker.execute("SELECT 1 FROM history.conversation_search_events WHERE run_key = %s FOR UPDATE", (old[1],))
    purger = psycopg.connect(db_dsn, autocommit=True)
    pid = purger.info.backend_pid
    notices: list[str] = []
    purger.add_notice_handler(lambda n: notices.append(n.message_primary))
    errors: list[BaseException] = []

    def purge():
        try:
            purger.execute("CALL history.purge(%s, 1)", (cutoff,))
        except BaseException as exc:  # noqa: BLE001 - the cancellation, checked below
            errors.append(exc)

    th = threading.Thread(target=purge)
    th.start()
    wait_until_blocked(conn, pid, "the purge", timeout_s=10)
    conn.execute("SELECT pg_cancel_backend(%s)", (pid,))
    th.join(10)
    blocker.rollback()
    blocker.close()
    assert errors and isinstance(errors[0], psycopg.errors.QueryCanceled)
    assert notices and notices[0].startswith("purge: batch 1: 1 runs, 2 searches")

    # Exactly the first run's rows are gone; the batch that was cancelled left everything.
    halfway = audit_rows(conn)
    first = rows_of(everything, {old[0]})
    assert {k: everything[k] - halfway[k] for k in everything} == first

    purger.execute("CALL history.purge(%s, 2)", (cutoff,))
    purger.close()
    done = audit_rows(conn)
    assert done == rows_of(everything, kept)  # the open runs and the late ended run, untouched
    # Each purged run's token goes with it (history.run_tokens: the token's tenant), the others stay.
    tokens, runs = ("SELECT run_token, tenant_key FROM history.run_tokens", "SELECT run_token, tenant_key FROM history.runs")
    assert set(conn.execute(tokens).fetchall()) == set(conn.execute(runs).fetchall())
    assert len(conn.execute(tokens).fetchall()) == len(kept)
    assert rows_of(done, kept) == rows_of(everything, kept)
    # Running it again is a no-op.
    with psycopg.connect(db_dsn, autocommit=True) as again:
        again.execute("CALL history.purge(%s)", (cutoff,))
    assert audit_rows(conn) == done


def test_purge_never_touches_an_open_run_whatever_the_cutoff(conn):
    cutoff, old, kept = purge_world(conn)
    open_runs = {r for (r,) in conn.execute("SELECT run_key FROM history.runs WHERE ended_at IS NULL").fetchall()}
    assert len(open_runs) == 2
    before = rows_of(audit_rows(conn), open_runs)
    conn.execute("CALL history.purge(now() + interval '1 year')")
    after = audit_rows(conn)
    assert after == before


def test_purge_bad_input_and_privileges(conn, connect_as):
    cutoff, old, kept = purge_world(conn)
    everything = audit_rows(conn)
    for args, named in [((None, 10), "p_before"), (("infinity", 10), "p_before"), ((cutoff, 0), "p_batch_size")]:
        with pytest.raises(psycopg.Error) as e:
            conn.execute("CALL history.purge(%s, %s)", args)
        assert e.value.sqlstate == "HS001" and named in e.value.diag.message_primary
    for role in ("history_runtime", "history_auditor", "history_searcher"):
        with connect_as(role) as c, pytest.raises(psycopg.Error) as e:
            c.execute("CALL history.purge(%s)", (cutoff,))
        assert e.value.sqlstate == "42501"
    assert audit_rows(conn) == everything


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "history_search", *args], capture_output=True, text=True, timeout=120)


def test_cli_purge_prints_a_line_per_batch(conn, db_dsn):
    cutoff, old, kept = purge_world(conn)
    done = cli("purge", "--before", cutoff.isoformat(), "--batch-size", "3", "--dsn", db_dsn)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("purge: batch 1: 3 runs, 6 searches")
    assert lines[1].startswith("purge: batch 2: 1 runs, 2 searches")
    assert lines[-1].startswith("purge: done, 4 runs")
    assert {r for (r,) in conn.execute("SELECT run_key FROM history.runs").fetchall()} == kept
    bad = cli("purge", "--before", "yesterday", "--dsn", db_dsn)
    assert bad.returncode == 2 and "yesterday" in bad.stderr and len(bad.stderr.splitlines()) == 1


# -- status ---------------------------------------------------------------------------------------


def test_status_view_says_what_runs(conn, connect_as):
    cutoff, old, kept = purge_world(conn)
    row = conn.execute("SELECT * FROM history.status").fetchone()
    cols = [d.name for d in conn.execute("SELECT * FROM history.status LIMIT 0").description]
    status = dict(zip(cols, row))
    assert status["release"] == conn.execute("SELECT history.schema_release()").fetchone()[0]
    assert status["open_runs"] == 2
    assert status["oldest_open_run_age"] > timedelta(0)
    assert status["searches_last_day"] == 11
    assert len(status["searches_by_hour"]) == 24
    assert sum(h["searches"] for h in status["searches_by_hour"]) == 11
    assert status["reindex_running"] is False and status["reindex_started_at"] is None
    # Budget exhaustion: a run whose 400 are spent.
    conn.execute("UPDATE history.runs SET evidence_count = 400 WHERE run_key = %s", (min(kept),))
    tok = conn.execute("SELECT run_token FROM history.runs WHERE run_key = %s", (min(kept),)).fetchone()[0]
    assert call_search(conn, tok, "kickoff")["status"] == "search_budget_exhausted"
    assert conn.execute("SELECT budget_exhausted_last_day FROM history.status").fetchone()[0] == 1
    # The auditor reads it; the runtime and the searcher do not.
    with connect_as("history_auditor") as c:
        assert c.execute("SELECT open_runs FROM history.status").fetchone()[0] == 2
    for role in ("history_runtime", "history_searcher"):
        with connect_as(role) as c, pytest.raises(psycopg.Error) as e:
            c.execute("SELECT * FROM history.status")
        assert e.value.sqlstate == "42501"
    # No column can carry text: only counts, times, keys, booleans and the hourly numbers.
    types = dict(conn.execute("""SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                  WHERE a.attrelid = 'history.status'::regclass AND a.attnum > 0""").fetchall())
    assert {c for c, ty in types.items() if ty in ("text", "jsonb")} == {"release", "searches_by_hour"}


def test_status_shows_a_reindex_half_done(conn):
    build_world(conn)
    conn.execute("""INSERT INTO history.reindex_progress VALUES (true, now() - interval '1 minute', 3, 3, 0, NULL)""")
    conn.execute("ANALYZE history.message_search_documents")
    row = conn.execute("SELECT reindex_running, reindex_rows_done, search_documents_estimate, reindex_percent "
                       "FROM history.status").fetchone()
    assert row[0] is True and row[1] == 3 and row[2] == 8
    assert float(row[3]) == 37.5


def test_cli_status(conn, db_dsn):
    cutoff, old, kept = purge_world(conn)
    done = cli("status", "--dsn", db_dsn)
    assert done.returncode == 0, done.stderr
    assert "open runs: 2" in done.stdout and "release:" in done.stdout
    as_json = cli("status", "--dsn", db_dsn, "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["open_runs"] == 2 and data["searches_last_day"] == 11 and len(data["searches_by_hour"]) == 24
