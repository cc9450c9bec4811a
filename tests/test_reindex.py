"""Re-index (docs/text-analysis.md): ``history-search reindex`` and
``history.reindex_documents`` rebuild every projection row with the current
analysis, in committed batches, with progress lines, restartable.

Fixtures (tests/harness.py): ``db_dsn`` (a fresh migrated database), ``conn``
(superuser, autocommit), ``connect_as(role)``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from history_search.cli import main
from history_search.client import Runtime

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)

# The projection as the current analysis would write it, next to what it holds.
STALE = """
SELECT d.message_id
  FROM history.message_search_documents d
  JOIN history.messages m ON m.message_key = d.message_key
  JOIN history.message_events e ON e.event_key = m.current_event_key
  JOIN history.conversations c ON c.conversation_key = m.conversation_key
 WHERE d.document IS DISTINCT FROM history._document_vector(e.body, c.language)
 ORDER BY d.message_key"""


@pytest.fixture
def world(connect_as, conn):
    rt = Runtime(connect_as("history_runtime"))
    rt.upsert_account("ann", "person")
    rt.upsert_conversation("team", "group")
    rt.upsert_conversation("haus", "group", None, "german")
    for conversation in ("team", "haus"):
        rt.add_member(conversation, "ann", T0 - timedelta(days=1))
    for i in range(10):
        rt.post_message(f"t{i}", "team", "ann", f"ticket PROJ-{4800 + i} about the houses", T0 + timedelta(minutes=i))
        rt.post_message(f"h{i}", "haus", "ann", f"die Häuser Nummer {i}", T0 + timedelta(minutes=30 + i))
    rt.edit_message("t3", "edited: see /etc/atlas/config.yaml", T0 + timedelta(hours=2))
    rt.delete_message("t4", T0 + timedelta(hours=2))
    assert conn.execute(STALE).fetchall() == []
    return rt


def stale(conn) -> list[str]:
    return [r[0] for r in conn.execute(STALE)]


def test_reindex_rebuilds_every_row_with_progress_lines(world, conn, db_dsn, capsys):
    # What an analysis change or a language change leaves behind: rows analysed otherwise.
    conn.execute("UPDATE history.message_search_documents SET document = to_tsvector('simple', 'stale') "
                 "WHERE message_id IN ('t1', 't3', 'h7')")
    conn.execute("UPDATE history.conversations SET language = 'simple' WHERE conversation_id = 'haus'")
    assert set(stale(conn)) == {"t1", "t3", "h7"} | {f"h{i}" for i in range(10)}
    rows = conn.execute("SELECT count(*) FROM history.message_search_documents").fetchone()[0]

    assert main(["reindex", "--dsn", db_dsn, "--batch-size", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert stale(conn) == []
    assert conn.execute("SELECT count(*) FROM history.message_search_documents").fetchone()[0] == rows == 19
    assert not conn.execute("SELECT 1 FROM history.message_search_documents WHERE message_id = 't4'").fetchone()
    progress = [line for line in out if line.startswith("reindex: ") and " of 19 rows" in line]
    assert len(progress) == 5  # 4 + 4 + 4 + 4 + 3
    assert progress[0].startswith("reindex: 4 of 19 rows")
    assert progress[-1].startswith("reindex: 19 of 19 rows (100.0%), 12 changed")
    assert out[-1].startswith("reindex: done, 19 rows, 12 changed")
    assert conn.execute("SELECT finished_at IS NOT NULL, rows_done, rows_changed FROM history.reindex_progress"
                        ).fetchone() == (True, 19, 12)
    # The German messages are now 'simple' documents: Häuser is no longer haus.
    assert conn.execute("SELECT document @@ 'häuser'::tsquery AND NOT document @@ 'haus'::tsquery "
                        "FROM history.message_search_documents WHERE message_id = 'h2'").fetchone()[0]


def test_reindex_again_changes_nothing(world, conn, db_dsn, capsys):
    assert main(["reindex", "--dsn", db_dsn]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("reindex: done, 19 rows, 0 changed")
    xmin = conn.execute("SELECT array_agg(xmin::text ORDER BY message_key) FROM history.message_search_documents").fetchone()
    assert main(["reindex", "--dsn", db_dsn]) == 0
    assert conn.execute("SELECT array_agg(xmin::text ORDER BY message_key) FROM history.message_search_documents"
                        ).fetchone() == xmin, "unchanged rows are not rewritten"


def test_an_interrupted_reindex_resumes_after_its_last_batch(world, conn, db_dsn, capsys):
    keys = [r[0] for r in conn.execute("SELECT message_key FROM history.message_search_documents ORDER BY message_key")]
    # As if a run had committed its batches up to the 10th row and then been stopped.
    conn.execute("INSERT INTO history.reindex_progress (singleton, started_at, last_tenant_key, last_message_key, "
                 "rows_done, rows_changed, finished_at) VALUES (true, now(), "
                 "(SELECT tenant_key FROM history.tenants WHERE tenant_id = 'default'), %s, 10, 0, NULL)", (keys[9],))
    conn.execute("UPDATE history.message_search_documents SET document = 'stale' WHERE message_key = ANY (%s)",
                 ([keys[2], keys[15]],))
    tenant = conn.execute("SELECT tenant_key FROM history.tenants WHERE tenant_id = 'default'").fetchone()[0]
    assert main(["reindex", "--dsn", db_dsn, "--batch-size", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"reindex: resuming after message key {keys[9]} of tenant key {tenant} (10 rows done")
    assert out[-1].startswith("reindex: done, 19 rows, 1 changed")
    left = conn.execute("SELECT message_key FROM history.message_search_documents WHERE document = 'stale'").fetchall()
    assert left == [(keys[2],)], "rows before the restart point were done already and are not redone"
    # --restart starts over from the first message.
    conn.execute("UPDATE history.reindex_progress SET finished_at = NULL")
    assert main(["reindex", "--dsn", db_dsn, "--restart"]) == 0
    assert "resuming" not in capsys.readouterr().out
    assert stale(conn) == []


def test_reindex_refuses_a_bad_batch_size_and_a_transaction_block(world, conn, db_dsn, capsys):
    assert main(["reindex", "--dsn", db_dsn, "--batch-size", "0"]) == 2  # the CLI's one error status
    assert "p_batch_size must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(psycopg.Error) as err:
        conn.execute("CALL history.reindex_documents(NULL)")
    assert err.value.sqlstate == "HS001"
    with psycopg.connect(db_dsn) as tx:  # not autocommit: a transaction block
        with pytest.raises(psycopg.errors.InvalidTransactionTermination):
            tx.execute("CALL history.reindex_documents(10)")


def test_reindex_is_not_for_client_roles(world, connect_as):
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        connect_as("history_runtime").execute("CALL history.reindex_documents(10)")


def test_reindex_remakes_the_people_s_name_terms(world, conn, db_dsn, capsys):
    world.upsert_account("ann", "person", "Ann Lee")
    made = conn.execute("SELECT name_terms FROM history.accounts WHERE account_id = 'ann'").fetchone()[0]
    assert made == ["ann", "lee"]
    # What an analysis change leaves behind: terms made by the old analysis, in today's languages.
    conn.execute("UPDATE history.accounts SET name_terms = '{annlee}' WHERE account_id = 'ann'")
    assert main(["reindex", "--dsn", db_dsn]) == 0
    assert conn.execute("SELECT name_terms FROM history.accounts WHERE account_id = 'ann'").fetchone()[0] == made


def test_reindex_goes_tenant_by_tenant_and_resumes_in_the_tenant_it_stopped_in(world, connect_as, conn, db_dsn, capsys):
    """Tenant by tenant (each statement names its tenant: on Citus a batch is one tenant's shards), and a
    restart point names its tenant: a run stopped inside the second tenant resumes there."""
    other = Runtime(connect_as("history_runtime"), tenant="acme")
    other.upsert_account("ann", "person")
    other.upsert_conversation("team", "group")
    other.add_member("team", "ann", T0 - timedelta(days=1))
    for i in range(5):  # the same ids as the default tenant's
        other.post_message(f"t{i}", "team", "ann", f"acme ticket {i}", T0 + timedelta(minutes=i))
    conn.execute("UPDATE history.message_search_documents SET document = to_tsvector('simple', 'stale') "
                 "WHERE message_id IN ('t1', 't2')")
    assert sorted(stale(conn)) == ["t1", "t1", "t2", "t2"]  # in both tenants
    default, acme = conn.execute(
        "SELECT (SELECT tenant_key FROM history.tenants WHERE tenant_id = 'default'), "
        "(SELECT tenant_key FROM history.tenants WHERE tenant_id = 'acme')").fetchone()
    assert default < acme
    acme_keys = [r[0] for r in conn.execute(
        "SELECT message_key FROM history.message_search_documents WHERE tenant_key = %s ORDER BY message_key",
        (acme,))]
    # As if a run had done the default tenant and acme's first two messages (t0, t1), then been stopped.
    conn.execute("INSERT INTO history.reindex_progress (singleton, started_at, last_tenant_key, last_message_key, "
                 "rows_done, rows_changed, finished_at) VALUES (true, now(), %s, %s, 21, 0, NULL)",
                 (acme, acme_keys[1]))
    assert main(["reindex", "--dsn", db_dsn, "--batch-size", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"reindex: resuming after message key {acme_keys[1]} of tenant key {acme} ")
    assert out[-1].startswith("reindex: done, 24 rows, 1 changed")
    left = conn.execute("SELECT t.tenant_id, d.message_id FROM history.message_search_documents d "
                        "JOIN history.tenants t USING (tenant_key) WHERE d.document = to_tsvector('simple', 'stale') "
                        "ORDER BY 1, 2").fetchall()
    # Before the restart point, left as they were: the whole default tenant, and acme's t1; after it, acme's t2.
    assert left == [("acme", "t1"), ("default", "t1"), ("default", "t2")]
    # From the start, every tenant's rows.
    assert main(["reindex", "--dsn", db_dsn, "--batch-size", "2", "--restart"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("reindex: done, 24 rows, 3 changed")
    assert stale(conn) == []
