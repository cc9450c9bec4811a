"""The README's quickstart, run as written: its SQL creates the three logins, its
Python (the agent loop) runs as those logins against a migrated database.

Fixture (tests/harness.py): ``db_dsn`` (a fresh migrated database, superuser).
Login roles are cluster-wide, so the test gives the README's names a unique
suffix and drops them afterwards.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

README = Path(__file__).resolve().parent.parent / "README.md"
LOGINS = ("hs_runtime", "hs_search", "hs_audit")


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(), re.M | re.S)


def quickstart_sql() -> str:
    text = README.read_text()
    marker = text.index("<!-- tests/test_readme.py runs this block")
    return re.search(r"```sql\n(.*?)```", text[marker:], re.S).group(1)


def quickstart_python() -> str:
    [code] = [b for b in blocks("python") if "begin_run" in b]
    return code


@pytest.fixture
def logins(db_dsn):
    suffix = "_" + secrets.token_hex(3)
    names = {name: name + suffix for name in LOGINS}
    script = quickstart_sql()
    for name, unique in names.items():
        script = re.sub(rf"\b{name}\b", unique, script)
    with psycopg.connect(db_dsn, autocommit=True) as conn:
        conn.execute(script)
    try:
        yield {name: make_conninfo(db_dsn, user=unique, password="change-me") for name, unique in names.items()}
    finally:
        with psycopg.connect(db_dsn, autocommit=True) as conn:
            for unique in names.values():
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(unique)))


def test_the_quickstart_sql_creates_logins_of_the_three_roles(db_dsn, logins):
    with psycopg.connect(db_dsn) as conn:
        for login, group in (("hs_runtime", "history_runtime"), ("hs_search", "history_searcher"),
                             ("hs_audit", "history_auditor")):
            user = psycopg.conninfo.conninfo_to_dict(logins[login])["user"]
            assert conn.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (user,)).fetchone() == (True,)
            assert conn.execute("SELECT pg_has_role(%s, %s, 'USAGE')", (user, group)).fetchone() == (True,)


def test_the_quickstart_agent_loop_runs(db_dsn, logins):
    code = quickstart_python()
    assert len(code.strip().splitlines()) <= 35  # a quickstart, not a program
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")},
           "RUNTIME_DSN": logins["hs_runtime"], "SEARCH_DSN": logins["hs_search"]}

    def run_it() -> dict:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "not delivered" not in proc.stdout
        return json.loads(proc.stdout)

    result = run_it()
    assert result["status"] == "ok"
    assert [h["message_id"] for h in result["hits"]] == ["m1"]
    assert result["hits"][0]["body"] == "The launch moves to June 12."
    assert run_it()["hits"][0]["message_id"] == "m1"  # run again: the same world, a new turn

    with psycopg.connect(db_dsn) as conn:
        # each turn's reply was posted with the evidence as its lineage, and each search audited
        replies = conn.execute(
            "SELECT m.message_id, array_agg(src.message_id) FROM history.messages m "
            "JOIN history.message_sources s ON s.message_key = m.message_key "
            "JOIN history.messages src ON src.message_key = s.source_key "
            "WHERE m.message_id LIKE 'reply-%' GROUP BY m.message_id").fetchall()
        # (the second turn also saw the first turn's reply, as m1's neighbour)
        assert len(replies) == 2 and all("m1" in sources for _, sources in replies)
        assert conn.execute("SELECT count(*) FROM history.search_audit").fetchone() == (2,)

    # the shell example (section 4) on the same world, with the README's URLs pointed at this database
    [shell] = [b for b in blocks("sh") if "begin-run" in b]
    for login in LOGINS:
        shell = shell.replace(f"postgresql://{login}:change-me@db.example/app", shlex.quote(logins[login]))
    assert "db.example" not in shell
    bin_dir = os.path.dirname(sys.executable)
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], capture_output=True, text=True, timeout=120,
                          env={**env, "PATH": bin_dir + os.pathsep + env.get("PATH", "")})
    assert proc.returncode == 0, proc.stderr
    assert "[1] m1 | alice (requester)" in proc.stdout and "(1 events)" in proc.stdout and "ended " in proc.stdout

    # the auditor login reads the audit, not the messages
    with psycopg.connect(logins["hs_audit"]) as auditor:
        assert auditor.execute("SELECT count(*) FROM history.search_audit").fetchone() == (3,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            auditor.execute("SELECT * FROM history.messages")
