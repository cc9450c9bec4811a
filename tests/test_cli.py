"""The history-search command, run as a subprocess against a real database."""

import json
import subprocess
import sys

import psycopg


def hs(*args, check=True):
    return subprocess.run([sys.executable, "-m", "history_search", *args],
                          capture_output=True, text=True, check=check, timeout=120)


def test_search_audit_and_verify_digest(db_dsn):
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        conn.execute("SELECT history.upsert_account('agent', 'agent'), history.upsert_account('alice', 'person')")
        conn.execute("SELECT history.upsert_conversation('team', 'group')")
        conn.execute("SELECT history.add_member('team', 'agent', '2026-01-01'), history.add_member('team', 'alice', '2026-01-01')")
        conn.execute("SELECT history.post_message('t1', 'team', 'alice', 'the release train leaves at noon', '2026-02-01')")
        conn.execute("SELECT history.post_message('t2', 'team', 'alice', 'thanks', '2026-02-02')")
        run = conn.execute("SELECT history.begin_run('agent', 'team', 'alice', 't2')").fetchone()[0]

    out = hs("search", "--dsn", db_dsn, "--run", str(run), "--json", "release train")
    result = json.loads(out.stdout)
    assert [h["message_id"] for h in result["hits"]] == ["t1"]
    event = result["search_event_id"]

    table = hs("audit", "--dsn", db_dsn, "--run", str(run)).stdout
    assert "searched_at" in table.splitlines()[0] and "(1 events)" in table
    rows = json.loads(hs("audit", "--dsn", db_dsn, "--json").stdout)
    assert rows[0]["hit_message_ids"] == ["t1"] and "release" not in json.dumps(rows)
    assert str(run) not in json.dumps(rows)  # the run shows by its key and token digest, never its token

    assert hs("verify-digest", "--dsn", db_dsn, event, "Release  TRAIN").stdout.strip() == "true"
    wrong = hs("verify-digest", "--dsn", db_dsn, event, "release plan", check=False)
    assert wrong.returncode == 1 and wrong.stdout.strip() == "false"

    bad = hs("search", "--dsn", db_dsn, "--run", "00000000-0000-0000-0000-000000000000", "x", check=False)
    assert bad.returncode == 2 and "HS002" in bad.stderr


def test_help_lists_every_command():
    text = hs("--help").stdout
    for command in ["migrate", "demo", "search", "audit", "verify-digest"]:
        assert command in text
