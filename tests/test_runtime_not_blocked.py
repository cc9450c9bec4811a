"""No lock a client role can take or keep blocks the runtime.

A ``history_searcher`` login searches, then sits in an open transaction holding
every advisory-lock key the runtime ever used (``hashtext('history.identity_proofs')``,
session and transaction level, exclusive and shared, in both key forms). Each
runtime call must still complete: the runtime session runs with
``lock_timeout = '1s'``, so a call that would wait on the searcher fails with
``55P03`` instead of hanging (no timed assertion).

The runtime serialises identity changes on a row of ``history.write_locks``,
which no client role can read or lock.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors, sql

from tests.harness import call_search

# Every key the runtime's old advisory locks used: pg_advisory_xact_lock(hashtext(...)),
# an int4 widened to the bigint key space. The searcher takes each of them.
OLD_KEY = "pg_catalog.hashtext('history.identity_proofs')"
ADVISORY_GRABS = [
    f"SELECT pg_catalog.pg_advisory_lock({OLD_KEY})",
    f"SELECT pg_catalog.pg_advisory_xact_lock({OLD_KEY}::bigint)",
    f"SELECT pg_catalog.pg_advisory_lock(0, {OLD_KEY})",
    f"SELECT pg_catalog.pg_advisory_lock_shared({OLD_KEY} + 1)",
]

SEARCH = "CALL history.search_history(%s, %s)"
DIRECT = "SELECT history._search_history(%s, %s)"


def build_world(admin: psycopg.Connection) -> dict[str, uuid.UUID]:
    """Two runs of one agent in a group, with evidence relying on an identity proof."""
    c = admin
    for account, kind in [("bot", "agent"), ("alice", "person"), ("alice-mail", "person"), ("bob", "person"),
                          ("carol", "person")]:
        c.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    c.execute("SELECT history.upsert_conversation('team', 'group')")
    c.execute("SELECT history.upsert_conversation('dm-mail', 'direct')")
    for conv, account in [("team", "bot"), ("team", "alice"), ("team", "bob"), ("team", "carol"),
                          ("dm-mail", "bot"), ("dm-mail", "alice-mail")]:
        c.execute("SELECT history.add_member(%s, %s, '2026-01-01')", (conv, account))
    for i, (author, body) in enumerate([("alice", "the launch is on monday"), ("bob", "launch checklist ready"),
                                        ("carol", "launch budget approved"), ("bob", "launch review at noon"),
                                        ("alice", "what about the launch?")]):
        c.execute("SELECT history.post_message(%s, 'team', %s, %s, %s::timestamptz)",
                  (f"t{i}", author, body, f"2026-02-0{i + 1}T10:00:00Z"))
    c.execute("SELECT history.post_message('mail-1', 'dm-mail', 'alice-mail', 'launch quote is forty', '2026-02-02')")
    c.execute("SELECT history.link_identity('proof-mail', 'alice', 'alice-mail', '2026-01-10')")
    c.execute("SELECT history.link_identity('proof-other', 'bob', 'carol', '2026-01-10')")
    return {
        # the requester's own direct conversation, reached through the link: evidence relies on proof-mail
        "reply": c.execute("SELECT history.begin_run('bot', 'team', 'alice', 't4', '{}', '{alice}')").fetchone()[0],
        "end": c.execute("SELECT history.begin_run('bot', 'team', 'alice', 't4')").fetchone()[0],
    }


@pytest.fixture
def searcher_login(db_dsn):
    """Conninfo of a real LOGIN role in history_searcher (dropped afterwards)."""
    name = f"hs_lock_searcher_{uuid.uuid4().hex[:8]}"
    password = uuid.uuid4().hex
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE history_searcher").format(
            sql.Identifier(name), sql.Literal(password)))
    yield psycopg.conninfo.make_conninfo(db_dsn, user=name, password=password)
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def grab_every_advisory_lock(searcher: psycopg.Connection) -> None:
    """Inside the searcher's open transaction: every key, all of them granted."""
    for stmt in ADVISORY_GRABS:
        searcher.execute(stmt)
    # the old key, held exclusively by this session (session and transaction locks share one entry)
    held = searcher.execute(
        "SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock' "
        "AND pid = pg_catalog.pg_backend_pid() AND objsubid = 1 "
        "AND ((classid::bigint << 32) | objid::bigint) = {}::bigint".format(OLD_KEY)).fetchone()[0]
    assert held == 1


def run_every_runtime_call(runtime: psycopg.Connection, runs: dict[str, uuid.UUID]) -> None:
    """Each call in its own transaction; lock_timeout turns a wait on the searcher into 55P03."""
    calls = [
        ("SELECT history.post_message('t9', 'team', 'bob', 'launch moved', '2026-02-09')", ()),
        ("SELECT history.record_reply(%s, 'reply-1', 'forty', '2026-02-11')", (runs["reply"],)),
        ("SELECT history.edit_message('t1', 'launch checklist done', '2026-02-10')", ()),
        ("SELECT history.delete_message('t3', '2026-02-10')", ()),
        ("SELECT history.link_identity('proof-new', 'bob', 'alice-mail', '2026-02-10')", ()),
        ("SELECT history.revoke_proof('proof-other', '2026-02-12')", ()),
        ("SELECT history.revoke_proof('proof-mail', '2026-02-12')", ()),
        ("SELECT history.end_run(%s)", (runs["end"],)),
        ("SELECT history.remove_member('team', 'carol', '2026-02-13')", ()),
    ]
    for stmt, args in calls:
        try:
            runtime.execute(stmt, args)
        except errors.LockNotAvailable as e:
            pytest.fail(f"{stmt} waited on the searcher's locks: {e}")
        runtime.commit()


def test_runtime_calls_complete_while_a_searcher_holds_every_advisory_key(db_dsn, searcher_login, connect_as):
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        runs = build_world(admin)
    with psycopg.connect(searcher_login, autocommit=True) as searcher:
        # The searcher's searches make the evidence the runtime then edits, deletes and relies on.
        for run in runs.values():
            assert call_search(searcher, run, "launch")["hits"]
        searcher.autocommit = False
        grab_every_advisory_lock(searcher)
        runtime = connect_as("history_runtime", autocommit=False)
        runtime.execute("SET lock_timeout = '1s'")
        runtime.commit()
        run_every_runtime_call(runtime, runs)
        # The searcher is still in its transaction, and every call took effect.
        assert searcher.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        assert admin.execute(
            "SELECT count(*) FILTER (WHERE revoked_at IS NOT NULL), count(*) FROM history.identity_proofs"
        ).fetchone() == (2, 3)
        assert admin.execute("SELECT count(*) FROM history.runs WHERE ended_at IS NOT NULL").fetchone()[0] == 2
        assert admin.execute("SELECT count(*) FROM history.messages WHERE message_id IN ('reply-1', 't9')"
                             ).fetchone()[0] == 2


def test_runtime_calls_complete_while_a_searcher_sits_in_a_transaction_after_searching(
        db_dsn, searcher_login, connect_as):
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        runs = build_world(admin)
    with psycopg.connect(searcher_login) as searcher:
        # The searcher's best attempt: searches that commit (the evidence the runtime then
        # touches), then searches inside its own open transaction, then hold everything.
        searcher.autocommit = True
        for run in runs.values():
            assert call_search(searcher, run, "launch")["hits"]
        searcher.autocommit = False
        for run in runs.values():
            for stmt in (SEARCH, DIRECT):
                with pytest.raises((errors.InvalidTransactionTermination, errors.InsufficientPrivilege)):
                    searcher.execute(stmt, (run, "launch"))
                searcher.rollback()  # the product refused a search inside a transaction block
        searcher.execute("SELECT 1")  # an open transaction
        grab_every_advisory_lock(searcher)
        runtime = connect_as("history_runtime", autocommit=False)
        runtime.execute("SET lock_timeout = '1s'")
        runtime.commit()
        run_every_runtime_call(runtime, runs)
        assert searcher.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


def test_no_client_role_can_touch_the_write_locks(connect_as):
    for role in ("history_searcher", "history_runtime", "history_auditor"):
        s = connect_as(role, autocommit=False)
        for stmt in ["SELECT * FROM history.write_locks FOR UPDATE", "SELECT count(*) FROM history.write_locks",
                     "LOCK TABLE history.write_locks IN ACCESS SHARE MODE"]:
            with pytest.raises(errors.InsufficientPrivilege):
                s.execute(stmt)
            s.rollback()
