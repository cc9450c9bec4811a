"""record_reply racing revoke_proof, over two real connections.

Whichever commits first wins, and a revoked proof never authorises a reply
that had not yet passed its final check: the reply holds the proofs it relies
on FOR SHARE, so a revocation either waits for the reply or is seen by it.
"""


import psycopg
import pytest

from tests.harness import call_search, run_in_thread, wait_until_blocked


def world(conn, tag):
    for account, kind in [("bot", "agent"), ("alice", "person"), ("alice-mail", "person")]:
        conn.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    for conv in ["dm-mail", "dm-alice"]:
        conn.execute("SELECT history.upsert_conversation(%s, 'direct')", (conv,))
    for conv, account in [("dm-mail", "bot"), ("dm-mail", "alice-mail"), ("dm-alice", "bot"), ("dm-alice", "alice")]:
        conn.execute("SELECT history.add_member(%s, %s, '2026-01-01')", (conv, account))
    conn.execute("SELECT history.post_message('mail-1', 'dm-mail', 'alice-mail', 'the quote is forty', '2026-02-01')")
    conn.execute("SELECT history.link_identity(%s, 'alice', 'alice-mail', '2026-01-10')", (f"proof-{tag}",))
    conn.execute("SELECT history.post_message(%s, 'dm-alice', 'alice', 'what was the quote?', '2026-02-03')", (f"ask-{tag}",))
    run = conn.execute("SELECT history.begin_run('bot', 'dm-alice', 'alice', %s)", (f"ask-{tag}",)).fetchone()[0]
    assert len(call_search(conn, run, "quote")["hits"]) == 1
    return run


@pytest.mark.parametrize("round_", range(3))
def test_revoke_first_blocks_the_reply(db_dsn, round_):
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        run = world(setup, round_)
    with psycopg.connect(db_dsn) as revoker, psycopg.connect(db_dsn) as replier, \
            psycopg.connect(db_dsn, autocommit=True) as observer:
        revoker.execute("SELECT history.revoke_proof(%s, '2026-02-04')", (f"proof-{round_}",))  # not committed yet
        pid = replier.info.backend_pid
        thread, box = run_in_thread(lambda: replier.execute(
            "SELECT history.record_reply(%s, 'reply-1', 'forty', '2026-02-05')", (run,)))
        wait_until_blocked(observer, pid)
        revoker.commit()
        thread.join(30)
        assert isinstance(box.get("error"), psycopg.Error) and box["error"].diag.sqlstate == "HS005"
        replier.rollback()
        assert observer.execute("SELECT count(*) FROM history.messages WHERE message_id = 'reply-1'").fetchone()[0] == 0
        assert observer.execute("SELECT ended_at IS NULL FROM history.runs WHERE run_token = %s", (run,)).fetchone()[0]


@pytest.mark.parametrize("round_", range(3))
def test_reply_first_makes_the_revocation_wait(db_dsn, round_):
    with psycopg.connect(db_dsn, autocommit=True) as setup:
        run = world(setup, round_)
    with psycopg.connect(db_dsn) as revoker, psycopg.connect(db_dsn) as replier, \
            psycopg.connect(db_dsn, autocommit=True) as observer:
        replier.execute("SELECT history.record_reply(%s, 'reply-1', 'forty', '2026-02-05')", (run,))  # not committed
        pid = revoker.info.backend_pid
        thread, box = run_in_thread(lambda: revoker.execute(
            "SELECT history.revoke_proof(%s, '2026-02-04')", (f"proof-{round_}",)))
        wait_until_blocked(observer, pid)
        replier.commit()
        thread.join(30)
        assert "error" not in box
        revoker.commit()
        assert observer.execute("SELECT count(*) FROM history.messages WHERE message_id = 'reply-1'").fetchone()[0] == 1
        revoked = observer.execute("SELECT revoked_at IS NOT NULL FROM history.identity_proofs WHERE proof_id = %s",
                                   (f"proof-{round_}",)).fetchone()[0]
        assert revoked
