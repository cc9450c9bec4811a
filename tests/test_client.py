"""The Python client against a real database: every call, the error mapping,
mapping by name, transactions, pools and asyncio.

Fixtures (tests/harness.py): ``db_dsn`` (a fresh migrated database, superuser
URL), ``conn`` (superuser, autocommit) and ``connect_as(role)``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from history_search.client import (QUERIES, AsyncAuditor, AsyncRuntime, AsyncSearch, Auditor, Runtime,
                                   Search)
from history_search.errors import (Conflict, DatabaseError, DeliveryBlocked, HistorySearchError,
                                   InvalidArgument, NotFound, SearchInTransaction, UnknownRun, translate,
                                   wrap_errors)
from history_search.models import (DeliveryProblem, Neighbour, RankingReasons, SearchHit, SearchResult)
from history_search.prompt import to_prompt

from tests.harness import call_search

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def build_world(rt: Runtime) -> dict:
    """agent, alice (+ linked alice-mail), bob, carol; a team group, bob's DM with the agent, alice's mail DM."""
    rt.upsert_account("agent", "agent", "Helper")
    for person in ("alice", "bob", "carol", "alice-mail"):
        rt.upsert_account(person, "person", person.title())
    rt.upsert_conversation("team", "group", "Team")
    rt.upsert_conversation("dm-bob", "direct")
    rt.upsert_conversation("dm-mail", "direct")
    for account in ("agent", "alice", "bob", "carol"):
        rt.add_member("team", account, at(-60))
    for account in ("agent", "bob"):
        rt.add_member("dm-bob", account, at(-60))
    for account in ("agent", "alice-mail"):
        rt.add_member("dm-mail", account, at(-60))
    rt.link_identity("proof-1", "alice", "alice-mail", at(-30))
    rt.post_message("t1", "team", "alice", "the launch is on monday", at(1))
    rt.post_message("t2", "team", "bob", "great, launch checklist ready", at(2))
    rt.post_message("t3", "team", "carol", "landing page done", at(3))
    rt.post_message("t4", "team", "alice", "launch party friday", at(4))
    rt.post_message("t5", "team", "bob", "see you there", at(5))
    rt.post_message("d1", "dm-bob", "bob", "private: the launch slipped", at(6))
    rt.post_message("m1", "dm-mail", "alice-mail", "launch budget is 40k", at(7))
    rt.post_message("t6", "team", "alice", "when is the launch?", at(8))
    return {"current": "t6"}


@pytest.fixture
def runtime(connect_as) -> Runtime:
    """A Runtime on a connection acting as history_runtime (autocommit)."""
    return Runtime(connect_as("history_runtime"))


@pytest.fixture
def world(runtime) -> dict:
    return build_world(runtime)


@pytest.fixture
def run(runtime, world) -> uuid.UUID:
    return runtime.begin_run("agent", "team", "alice", world["current"])


@pytest.fixture
def search(connect_as, run) -> Search:
    """The model side, acting as history_searcher."""
    return Search(connect_as("history_searcher"), run)


# --------------------------------------------------------------------------
# Every runtime call
# --------------------------------------------------------------------------


def test_ingestion_calls_reach_the_server(runtime, world, conn):
    row = conn.execute("SELECT kind, display_name FROM history.accounts WHERE account_id = 'agent'").fetchone()
    assert row == ("agent", "Helper")
    runtime.upsert_account("agent", "agent", "Helper 2")
    assert conn.execute("SELECT display_name FROM history.accounts WHERE account_id = 'agent'").fetchone()[0] \
        == "Helper 2"
    runtime.upsert_conversation("team", "group", "Team renamed")
    assert conn.execute("SELECT kind, title FROM history.conversations WHERE conversation_id = 'team'"
                        ).fetchone() == ("group", "Team renamed")

    runtime.remove_member("team", "carol", at(100))
    until = conn.execute(
        "SELECT m.until FROM history.memberships m JOIN history.accounts a USING (account_key) "
        "JOIN history.conversations c USING (conversation_key) "
        "WHERE a.account_id = 'carol' AND c.conversation_id = 'team'").fetchone()[0]
    assert until == at(100)
    runtime.add_member("team", "carol", at(200))
    assert conn.execute(
        "SELECT count(*) FROM history.memberships m JOIN history.accounts a USING (account_key) "
        "WHERE a.account_id = 'carol'").fetchone()[0] == 2

    runtime.post_message("s1", "team", "agent", "summary of the launch", at(9), sources=("t1", "t2"))
    sources = conn.execute(
        "SELECT array_agg(src.message_id ORDER BY src.message_id) FROM history.message_sources s "
        "JOIN history.messages m ON m.message_key = s.message_key "
        "JOIN history.messages src ON src.message_key = s.source_key WHERE m.message_id = 's1'").fetchone()[0]
    assert sources == ["t1", "t2"]
    runtime.post_message("s1", "team", "agent", "summary of the launch", at(9), sources=["t2", "t1"])  # idempotent

    runtime.edit_message("t3", "landing page shipped", at(10))
    runtime.delete_message("t5", at(11))
    events = conn.execute(
        "SELECT m.message_id, e.event_kind, e.body FROM history.messages m "
        "JOIN history.message_events e ON e.event_key = m.current_event_key "
        "WHERE m.message_id IN ('t3', 't5') ORDER BY 1").fetchall()
    assert events == [("t3", "edited", "landing page shipped"), ("t5", "deleted", None)]

    runtime.revoke_proof("proof-1", at(12))
    assert conn.execute("SELECT revoked_at FROM history.identity_proofs WHERE proof_id = 'proof-1'"
                        ).fetchone()[0] == at(12)


def test_a_runtime_works_in_its_tenant(connect_as, world, conn, search):
    """Runtime(tenant=...) names ids of that tenant only; the default tenant is untouched."""
    runtime_role = connect_as("history_runtime")
    acme = Runtime(runtime_role, tenant="acme")
    assert acme.tenant == "acme" and Runtime(runtime_role).tenant == "default"
    with pytest.raises(NotFound, match="'nowhere'"):
        Runtime(runtime_role, tenant="nowhere").add_member("team", "alice", at(0))
    with pytest.raises(InvalidArgument, match="tenant"):
        Runtime(runtime_role, tenant="no spaces").upsert_account("x", "person")
    with pytest.raises(InvalidArgument, match="tenant must be a str"):
        Runtime(runtime_role, tenant=3)  # type: ignore[arg-type]
    # The same ids as the default tenant's world, other words.
    acme.upsert_account("agent", "agent", "Acme helper")
    acme.upsert_account("alice", "person")
    acme.upsert_account("zed", "person")
    acme.upsert_conversation("team", "group", "Acme team")
    for account in ("agent", "alice", "zed"):
        acme.add_member("team", account, at(-60))
    acme.post_message("t1", "team", "zed", "acme: the launch is secret", at(1))
    acme.post_message("t6", "team", "alice", "launch?", at(8))
    acme.edit_message("t1", "acme: the launch is still secret", at(9))
    acme.link_identity("proof-1", "alice", "zed", at(-30))
    acme.revoke_proof("proof-1", at(10))
    with pytest.raises(NotFound, match="'zed'"):
        Runtime(runtime_role).post_message("x", "team", "zed", "hi", at(1))
    with pytest.raises(NotFound, match="'d1'"):
        acme.delete_message("d1", at(10))
    # The default tenant's search finds its own t1, never acme's.
    hits = search.search("launch secret", limit=20).hits
    assert "t1" in [h.message_id for h in hits] and not any("acme" in h.body for h in hits)
    # A run begun in acme carries it: the reply goes into acme's team.
    run = acme.begin_run("agent", "team", "alice", "t6")
    # Its search finds acme's t1, audited in acme, and ends in acme.
    acme_result = Search(connect_as("history_searcher"), run).search("launch secret", limit=20)
    assert [(h.message_id, h.body) for h in acme_result.hits] == [("t1", "acme: the launch is still secret")]
    assert Auditor(connect_as("history_auditor")).search_events(event=acme_result.search_event_id)[0]["tenant_id"] == "acme"
    assert acme.check_delivery(run) == []
    acme.record_reply(run, "reply", "noted", at(11))
    assert conn.execute("SELECT DISTINCT t.tenant_id FROM history.run_trace r JOIN history.tenants t USING (tenant_key)"
                        " WHERE r.run_key = (SELECT run_key FROM history.runs WHERE run_token = %s)", (run,)
                        ).fetchall() == [("acme",)]
    ended = acme.begin_run("agent", "team", "alice", "t6")
    acme.end_run(ended)
    assert conn.execute("SELECT t.tenant_id, e.body FROM history.messages m JOIN history.tenants t USING (tenant_key)"
                        " JOIN history.message_events e ON e.event_key = m.current_event_key"
                        " WHERE m.message_id IN ('reply', 't1') ORDER BY 1, 2").fetchall() == [
        ("acme", "acme: the launch is still secret"), ("acme", "noted"), ("default", "the launch is on monday")]
    assert acme.erase_account("zed", at(12)) == 1


def test_begin_run_check_delivery_record_reply_end_run(runtime, world, connect_as, conn):
    run = runtime.begin_run("agent", "team", "alice", "t6", loaded_message_ids=["t4"], audience=None)
    assert isinstance(run, uuid.UUID)
    result = runtime.search_for(run).search("launch")
    assert {h.message_id for h in result.hits} == {"t1", "t2"}  # t4 loaded, t6 current, d1/m1 private
    assert runtime.check_delivery(run) == []
    runtime.record_reply(run, "r1", "the launch is on monday", at(20))
    lineage = conn.execute(
        "SELECT array_agg(src.message_id ORDER BY src.message_id) FROM history.message_sources s "
        "JOIN history.messages m ON m.message_key = s.message_key "
        "JOIN history.messages src ON src.message_key = s.source_key WHERE m.message_id = 'r1'").fetchone()[0]
    assert set(lineage) == {m for h in result.hits for m in [h.message_id]
                            + [n.message_id for n in h.before + h.after]}
    with pytest.raises(UnknownRun):  # record_reply ended the run
        runtime.check_delivery(run)

    run2 = runtime.begin_run("agent", "team", "alice", "t6", audience=["alice", "bob"])
    runtime.end_run(str(run2))  # a str token is accepted
    with pytest.raises(UnknownRun) as ended:
        Search(connect_as("history_searcher"), run2).search("launch")
    assert ended.value.sqlstate == "HS002"


def test_run_status_reads_a_run_without_searching(runtime, world, connect_as, conn):
    run = runtime.begin_run("agent", "team", "alice", "t6")
    search = Search(connect_as("history_searcher"), run)
    assert search.status() == "open"
    runtime.end_run(run)
    assert search.status() == "ended"
    stranger = uuid.uuid4()
    with pytest.raises(UnknownRun) as unknown:
        Search(connect_as("history_searcher"), stranger).status()
    assert unknown.value.sqlstate == "HS002" and str(stranger) not in str(unknown.value)
    assert conn.execute("SELECT count(*) FROM history.conversation_search_events").fetchone() == (0,)
    assert conn.execute("SELECT search_count FROM history.runs WHERE run_token = %s", (run,)).fetchone() == (0,)


def test_check_delivery_returns_problems_and_record_reply_is_blocked(runtime, run, search):
    result = search.search("launch", limit=1)
    hit = result.hits[0].message_id
    runtime.delete_message(hit, at(30))
    problems = runtime.check_delivery(run)
    assert DeliveryProblem(hit, "deleted") in problems
    assert all(isinstance(p, DeliveryProblem) for p in problems)
    with pytest.raises(DeliveryBlocked) as blocked:
        runtime.record_reply(run, "r1", "reply", at(31))
    assert blocked.value.sqlstate == "HS005"
    assert hit in blocked.value.message
    assert blocked.value.hint
    runtime.end_run(run)  # the run stayed open


# --------------------------------------------------------------------------
# Search and its mapping
# --------------------------------------------------------------------------


def test_search_maps_every_field(search, run):
    result = search.search("launch monday", speaker="anyone", limit=8)
    assert isinstance(result, SearchResult)
    assert result.status == "ok" and not result.budget_exhausted
    assert isinstance(result.search_event_id, uuid.UUID)
    assert result.budget_used + result.budget_remaining == 400
    assert [h.message_id for h in result.hits][:1] == ["t1"]
    top = result.hits[0]
    assert isinstance(top, SearchHit)
    assert (top.conversation_id, top.speaker_id, top.speaker_role, top.body) == \
        ("team", "alice", "requester", "the launch is on monday")
    assert top.sent_at == at(1) and top.sent_at.tzinfo is timezone.utc
    assert isinstance(top.reasons, RankingReasons)
    assert top.reasons.total == pytest.approx(top.score)
    assert set(top.reasons.matched_terms) == {"launch", "monday"}
    assert isinstance(top.before, tuple) and isinstance(top.after, tuple)
    assert [n.message_id for n in top.after] == ["t2", "t3"]
    assert all(isinstance(n, Neighbour) and n.sent_at.tzinfo is timezone.utc for n in top.after)
    assert top.after[0].speaker_role == "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        top.body = "changed"  # type: ignore[misc]
    json.dumps(result.to_dict())  # JSON-able
    assert search.run == run


def test_search_filters_are_passed(search):
    mine = search.search("launch", speaker="requester")
    assert {h.speaker_id for h in mine.hits} <= {"alice", "alice-mail"}
    assert all(h.speaker_role == "requester" for h in mine.hits)
    window = search.search("launch", after=at(2), before=at(4))
    assert [h.message_id for h in window.hits] == ["t2"]
    assert len(search.search("launch", limit=1).hits) == 1
    assert search.search("", limit=None).hits == ()
    assert search.search("launch", speaker=None).status == "ok"


def test_times_are_utc_whatever_the_session_time_zone(connect_as, run):
    c = connect_as("history_searcher")
    c.execute("SET TimeZone = 'Asia/Kathmandu'")
    hit = Search(c, run).search("monday").hits[0]
    assert hit.sent_at == at(1) and hit.sent_at.utcoffset() == timedelta(0)
    assert all(n.sent_at.utcoffset() == timedelta(0) for n in hit.after)
    # an aware datetime in another zone is the same instant
    kathmandu = timezone(timedelta(hours=5, minutes=45))
    window = Search(c, run).search("launch", after=at(2).astimezone(kathmandu), before=at(4).astimezone(kathmandu))
    assert [h.message_id for h in window.hits] == ["t2"]


def test_mapping_by_name_survives_a_new_field_of_search_hit(conn, search):
    """Adding a field to history.search_hit (the spec allows it) must not break the client.

    As a real migration would, the type gets a new attribute and the search's
    result stage fills it (history._search_hits builds the hits with
    ROW(...)::history.search_hit, which must list every attribute): here it
    appends a constant to that ROW.
    """
    source = conn.execute(
        "SELECT pg_get_functiondef('history._search_hits(integer, history._admission, history._ranked_candidate[], text[],"
        " bigint, bigint[], integer)'::regprocedure)").fetchone()[0]
    pattern = re.compile(r"\)(\s*)::\s*history\.search_hit\b")
    if len(pattern.findall(source)) != 1:
        pytest.fail("_search_hits no longer builds its hits with one ROW(...)::history.search_hit; "
                    "update this test's way of filling the added attribute")
    conn.execute("ALTER TYPE history.search_hit ADD ATTRIBUTE extra_signal text")
    conn.execute(pattern.sub(r", 'an extra value'::text)\1::history.search_hit", source))
    raw = call_search(conn, search.run, "launch monday")["hits"][0]
    assert raw["extra_signal"] == "an extra value"  # the server really sends the new field

    result = search.search("launch monday")
    assert result.hits and result.hits[0].message_id == "t1"
    assert not hasattr(result.hits[0], "extra_signal")


def test_mapping_by_name_ignores_unknown_keys_everywhere():
    neighbour = {"message_id": "n1", "conversation_id": "c", "sent_at": "2026-03-01T09:00:00+01:00",
                 "speaker_id": "bob", "speaker_role": "other", "body": "hi", "body_truncated": True, "reactions": 3}
    reasons = {"text": 0.1, "coverage": 1, "actor": 0, "conversation": 0.3, "participation": 0.2,
               "recency": 0.5, "total": 2.1, "matched_terms": ["hi"], "new_signal": 9}
    hit = {"message_id": "h1", "conversation_id": "c", "sent_at": "2026-03-01T08:00:00Z", "speaker_id": "alice",
           "speaker_role": "requester", "body": "hello", "score": 2.1, "reasons": reasons, "before": [],
           "after": [neighbour], "body_truncated": False, "thread_id": "x"}
    # keys in any order (JSON objects are unordered), an unknown key at every level
    result = SearchResult.from_dict(dict(reversed(list({
        "status": "ok", "search_event_id": str(uuid.uuid4()), "budget_used": 2, "budget_remaining": 398,
        "hits": [dict(reversed(list(hit.items())))], "tenant": "t"}.items()))))
    assert result.hits[0].after[0].sent_at == datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc)
    assert result.hits[0].reasons.coverage == 1.0 and result.hits[0].reasons.matched_terms == ("hi",)
    assert result.hits[0].after[0].body_truncated is True and result.hits[0].body_truncated is False
    with pytest.raises(ValueError, match="score"):
        SearchHit.from_dict({k: v for k, v in hit.items() if k != "score"})


def test_search_is_the_committing_procedure_with_named_arguments():
    assert "CALL history.search_history(" in QUERIES["search_history"]
    assert "result => NULL" in QUERIES["search_history"]
    assert all("%s" not in q.replace("%(", "") for q in QUERIES.values())  # only %(name)s parameters


def test_to_prompt_of_a_real_result(search):
    text = to_prompt(search.search("monday"), max_chars=4000)
    assert "\n[1] t1 | alice (requester) | 2026-03-01 09:01 UTC | in team\n    the launch is on monday\n" in text
    assert "\n    - after: t2 | bob (other) | 2026-03-01 09:02 UTC\n        great, launch checklist ready" in text


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_each_hs_code_maps_to_its_class(runtime, world, search, run):
    with pytest.raises(InvalidArgument) as e1:
        search.search("launch", limit=0)
    with pytest.raises(UnknownRun) as e2:
        runtime.check_delivery(uuid.uuid4())
    with pytest.raises(NotFound) as e3:
        runtime.post_message("x1", "no-such-conversation", "alice", "hi", at(40))
    runtime.delete_message("t5", at(41))
    with pytest.raises(Conflict) as e4:
        runtime.edit_message("t5", "undelete?", at(42))
    assert [h.message_id for h in search.search("monday", limit=1).hits] == ["t1"]
    runtime.delete_message("t1", at(43))
    with pytest.raises(DeliveryBlocked) as e5:
        runtime.record_reply(run, "r9", "reply", at(44))
    for info, code in [(e1, "HS001"), (e2, "HS002"), (e3, "HS003"), (e4, "HS004"), (e5, "HS005")]:
        exc = info.value
        assert isinstance(exc, HistorySearchError)
        assert exc.sqlstate == code == type(exc).code
        assert exc.message and code in str(exc)
        assert isinstance(exc.__cause__, psycopg.Error) and exc.__cause__.diag.sqlstate == code
    assert "no-such-conversation" in e3.value.message
    assert isinstance(e1.value, ValueError)


def test_server_detail_and_hint_are_carried(search):
    with pytest.raises(InvalidArgument) as info:
        search.search("launch", speaker="everyone")
    assert "everyone" in info.value.message
    assert info.value.hint and "requester" in info.value.hint


def test_other_database_errors_become_database_error(connect_as, world):
    model_side = Runtime(connect_as("history_searcher"))  # may not call runtime functions
    with pytest.raises(DatabaseError) as info:
        model_side.upsert_account("mallory", "person")
    assert info.value.sqlstate == "42501"
    assert isinstance(info.value.__cause__, psycopg.errors.InsufficientPrivilege)
    assert not info.value.retryable
    assert not isinstance(info.value, (InvalidArgument, UnknownRun, NotFound, Conflict, DeliveryBlocked))


def test_translate_unknown_hs_code_and_non_driver_errors(conn):
    with pytest.raises(HistorySearchError) as info, wrap_errors():
        conn.execute("DO $$BEGIN RAISE EXCEPTION 'future error' USING ERRCODE = 'HS099', DETAIL = 'd'; END$$")
    assert type(info.value) is HistorySearchError
    assert (info.value.sqlstate, info.value.message, info.value.detail) == ("HS099", "future error", "d")
    with pytest.raises(DatabaseError) as info:
        with wrap_errors():
            conn.execute("SELECT 1/0")
    assert info.value.sqlstate == "22012"
    with pytest.raises(DatabaseError) as info:
        with wrap_errors():
            conn.execute("DO $$BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '40001'; END$$")
    assert info.value.retryable
    plain = KeyError("k")
    assert translate(plain) is plain
    with pytest.raises(KeyError), wrap_errors():
        raise plain


def test_closed_connection_is_a_database_error(db_dsn, run):
    c = psycopg.connect(db_dsn, autocommit=True)
    c.close()
    with pytest.raises(DatabaseError) as info:
        Search(c, run).search("launch")
    assert isinstance(info.value.__cause__, psycopg.OperationalError)


def test_client_side_checks_never_reach_the_server(runtime, world, search):
    with pytest.raises(InvalidArgument, match="naive"):
        runtime.post_message("x2", "team", "alice", "hi", datetime(2026, 3, 1, 9, 0))
    with pytest.raises(InvalidArgument, match="NUL"):
        runtime.post_message("x2", "team", "alice", "nul \x00 byte", at(50))
    with pytest.raises(InvalidArgument, match="Unicode"):
        search.search("lone \ud800 surrogate")
    with pytest.raises(InvalidArgument, match="naive"):
        search.search("launch", after=datetime(2026, 1, 1))
    with pytest.raises(InvalidArgument, match="integer"):
        search.search("launch", limit=2**40)
    with pytest.raises(InvalidArgument, match="int"):
        search.search("launch", limit="5")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="str"):
        search.search(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="uuid"):
        Search(runtime._source, "not-a-uuid")
    with pytest.raises(TypeError):
        Search("postgresql://nowhere", uuid.uuid4())  # type: ignore[arg-type]
    # a null query is the server's HS001 (it names the problem)
    with pytest.raises(InvalidArgument, match="p_query"):
        search.search(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Transactions belong to the caller
# --------------------------------------------------------------------------


def test_client_never_commits_a_callers_transaction(db_dsn, world, conn):
    with psycopg.connect(db_dsn) as tx:  # autocommit off
        rt = Runtime(tx)
        rt.post_message("tx1", "team", "alice", "in a transaction", at(60))
        assert tx.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert conn.execute("SELECT count(*) FROM history.messages WHERE message_id = 'tx1'").fetchone()[0] == 0
        tx.rollback()
        assert conn.execute("SELECT count(*) FROM history.messages WHERE message_id = 'tx1'").fetchone()[0] == 0

        with tx.transaction():  # several calls, one transaction
            rt.post_message("tx2", "team", "alice", "first", at(61))
            rt.post_message("tx3", "team", "bob", "second", at(62))
        assert conn.execute("SELECT count(*) FROM history.messages WHERE message_id IN ('tx2', 'tx3')"
                            ).fetchone()[0] == 2

        run = rt.begin_run("agent", "team", "alice", "t6")
        # A search commits its own audit (audit before reveal), so it refuses a
        # connection inside the caller's transaction, before sending anything ...
        with pytest.raises(SearchInTransaction):
            Search(tx, run).search("launch")
        assert tx.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        tx.commit()
        # ... and outside one it switches the connection to autocommit for the call, then back.
        Search(tx, run).search("launch")
        assert not tx.autocommit and tx.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("SELECT count(*) FROM history.search_audit a JOIN history.runs r USING (run_key) "
                            "WHERE r.run_token = %s", (run,)
                            ).fetchone()[0] == 1


def test_pool_takes_a_connection_per_call_and_commits(db_dsn, conn):
    with ConnectionPool(db_dsn, min_size=1, max_size=2, open=True) as pool:
        rt = Runtime(pool)
        build_world(rt)
        run = rt.begin_run("agent", "team", "alice", "t6")
        # committed: another connection sees it
        assert conn.execute("SELECT count(*) FROM history.messages").fetchone()[0] == 8
        result = Search(pool, run).search("launch")
        assert result.hits
        with pytest.raises(NotFound):
            rt.edit_message("nope", "x", at(70))
        assert Search(pool, run).search("launch").status == "ok"  # the pool's connection is fine after an error
        events = Auditor(pool).search_events(run=run)
        assert len(events) == 2


# --------------------------------------------------------------------------
# Auditor
# --------------------------------------------------------------------------


def test_auditor_calls(connect_as, search, run):
    result = search.search("launch monday")
    auditor = Auditor(connect_as("history_auditor"))
    rows = auditor.search_events(run=run)
    assert [r["search_event_id"] for r in rows] == [result.search_event_id]
    row = rows[0]
    assert row["agent_id"] == "agent" and row["status"] == "ok" and row["excluded_audience"] >= 1
    assert "query" not in row  # the text is stored nowhere
    assert auditor.search_events(agent_id="nobody") == []
    assert row["tenant_id"] == "default"
    assert auditor.search_events(tenant="default") == rows and auditor.search_events(tenant="acme") == []
    # the auditor sees the run's key and its token's SHA-256, never the token
    event_row = auditor.search_events(event=result.search_event_id)[0]
    assert "run_id" not in event_row and str(run) not in str(event_row)
    assert event_row["run_token_sha256"] == hashlib.sha256(str(run).encode()).hexdigest()
    assert all(str(run) not in str(m) for m in auditor.search_event_messages(result.search_event_id))
    assert auditor.search_events(since=datetime.now(timezone.utc) + timedelta(hours=1)) == []
    assert auditor.search_events(until=datetime.now(timezone.utc) + timedelta(hours=1), limit=1) == rows
    messages = auditor.search_event_messages(result.search_event_id)
    assert [m["message_id"] for m in messages if m["role"] == "hit"] == [h.message_id for h in result.hits]
    with pytest.raises(DatabaseError) as refused:  # a dictionary oracle: history_digest_verifier only
        auditor.verify_query_digest(result.search_event_id, "launch monday")
    assert refused.value.sqlstate == "42501"
    verifier = Auditor(connect_as("history_digest_verifier"))
    assert verifier.verify_query_digest(result.search_event_id, "launch monday") is True
    assert verifier.verify_query_digest(str(result.search_event_id), "something else") is False


# --------------------------------------------------------------------------
# asyncio
# --------------------------------------------------------------------------


def test_async_connection(db_dsn):
    async def main():
        async with await psycopg.AsyncConnection.connect(db_dsn, autocommit=True) as aconn:
            rt = AsyncRuntime(aconn)
            await rt.upsert_account("agent", "agent")
            for person in ("alice", "bob"):
                await rt.upsert_account(person, "person")
            await rt.upsert_conversation("team", "group")
            for account in ("agent", "alice", "bob"):
                await rt.add_member("team", account, at(-10))
            await rt.post_message("a1", "team", "alice", "async launch notes", at(1))
            await rt.post_message("a2", "team", "bob", "ok", at(2))
            await rt.edit_message("a2", "ok!", at(3))
            await rt.post_message("a3", "team", "bob", "to delete", at(4))
            await rt.delete_message("a3", at(5))
            await rt.upsert_account("bob-mail", "person")
            await rt.link_identity("p1", "bob", "bob-mail", at(6))
            await rt.revoke_proof("p1", at(7))
            await rt.remove_member("team", "bob", at(8))
            await rt.post_message("a4", "team", "alice", "launch?", at(9))
            run = await rt.begin_run("agent", "team", "alice", "a4")
            search = AsyncSearch(aconn, run)
            result = await search.search("launch")
            assert [h.message_id for h in result.hits] == ["a1"]
            assert result.hits[0].after[0].body == "ok!"
            assert await rt.check_delivery(run) == []
            with pytest.raises(InvalidArgument):
                await search.search("launch", limit=0)
            auditor = AsyncAuditor(aconn)
            assert len(await auditor.search_events(run=run)) == 1
            assert await auditor.verify_query_digest(result.search_event_id, "launch")
            assert (await auditor.search_event_messages(result.search_event_id))[0]["message_id"] == "a1"
            await rt.record_reply(run, "a5", "monday", at(10))
            with pytest.raises(UnknownRun):
                await search.search("launch")
            run2 = await rt.begin_run("agent", "team", "alice", "a4")
            await rt.end_run(run2)
            assert rt.search_for(run2).run == run2

    asyncio.run(main())


def test_async_pool(db_dsn, world, run):
    async def main():
        async with AsyncConnectionPool(db_dsn, min_size=1, max_size=2, open=False) as pool:
            result = await AsyncSearch(pool, run).search("launch monday")
            assert result.hits[0].message_id == "t1"
            with pytest.raises(NotFound):
                await AsyncRuntime(pool).delete_message("nope", at(1))
            with pytest.raises(NotFound, match="'t1'"):  # t1 is the default tenant's
                await AsyncRuntime(pool, tenant="acme").upsert_account("agent", "agent")
                await AsyncRuntime(pool, tenant="acme").delete_message("t1", at(1))
            assert await AsyncRuntime(pool).check_delivery(run) == []

    asyncio.run(main())
