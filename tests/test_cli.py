"""The history-search command, run as a subprocess against a real database.

Every failure is one line on stderr and a documented exit status (cli.EXIT_CODES):
0 success, 1 verify-digest's "no match", 2 any error, 141 stdout closed early.
"""

import json
import os
import subprocess
import sys
import uuid
from urllib.parse import quote

import psycopg
import pytest

from history_search.cli import EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_NO_MATCH, EXIT_OK

NO_RUN = "00000000-0000-0000-0000-000000000000"
UNREACHABLE = "postgresql://127.0.0.1:1/nowhere?connect_timeout=5"


def hs(*args, check=True, env=None):
    base = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")}
    return subprocess.run([sys.executable, "-m", "history_search", *args], capture_output=True, text=True,
                          check=check, timeout=120, env={**base, **(env or {})})


def as_role(dsn: str, role: str) -> str:
    return dsn + ("&" if "?" in dsn else "?") + "options=" + quote(f"-c role={role}")


def assert_one_line_error(proc, code=EXIT_ERROR, *fragments):
    lines = proc.stderr.splitlines()
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("history-search"), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def build_world(dsn: str, bodies: int = 0) -> str:
    """A team with an agent and alice; returns a run token (alice asking in the team)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT history.upsert_account('agent', 'agent'), history.upsert_account('alice', 'person')")
        conn.execute("SELECT history.upsert_conversation('team', 'group')")
        conn.execute("SELECT history.add_member('team', 'agent', '2026-01-01'), history.add_member('team', 'alice', '2026-01-01')")
        conn.execute("SELECT history.post_message('t1', 'team', 'alice', 'the release train leaves at noon', '2026-02-01')")
        for i in range(bodies):  # long messages, for output larger than a pipe's buffer
            conn.execute("SELECT history.post_message(%s, 'team', 'alice', %s, %s::timestamptz)",
                         (f"long{i}", f"release notes part {i} " + "lorem ipsum " * 400, f"2026-02-01 12:{i:02d}Z"))
        conn.execute("SELECT history.post_message('t2', 'team', 'alice', 'thanks', '2026-02-02')")
        return str(conn.execute("SELECT history.begin_run('agent', 'team', 'alice', 't2')").fetchone()[0])


def test_search_audit_and_verify_digest(db_dsn):
    run = build_world(db_dsn)
    out = hs("search", "--dsn", as_role(db_dsn, "history_searcher"), "--run", run, "--json", "release train")
    result = json.loads(out.stdout)
    assert [h["message_id"] for h in result["hits"]] == ["t1"]
    event = result["search_event_id"]

    auditor = as_role(db_dsn, "history_auditor")
    table = hs("audit", "--dsn", auditor, "--run", run).stdout
    assert "searched_at" in table.splitlines()[0] and "(1 events)" in table
    rows = json.loads(hs("audit", "--dsn", auditor, "--json").stdout)
    assert rows[0]["hit_message_ids"] == ["t1"] and "release" not in json.dumps(rows)
    assert json.loads(hs("audit", "--dsn", auditor, "--json", "--since", "2999-01-01T00:00:00Z").stdout) == []
    assert str(run) not in json.dumps(rows)  # the run shows by its key and token digest, never its token

    verifier = as_role(db_dsn, "history_digest_verifier")
    match = hs("verify-digest", "--dsn", verifier, event, "Release  TRAIN")
    assert match.returncode == EXIT_OK and match.stdout.strip() == "true"
    wrong = hs("verify-digest", "--dsn", verifier, event, "release plan", check=False)
    assert wrong.returncode == EXIT_NO_MATCH and wrong.stdout.strip() == "false" and wrong.stderr == ""

    bad = hs("search", "--dsn", db_dsn, "--run", NO_RUN, "x", check=False)
    assert_one_line_error(bad, EXIT_ERROR, "history-search search: [HS002]")


def test_begin_run_and_end_run_for_dbas(db_dsn):
    build_world(db_dsn)
    runtime = as_role(db_dsn, "history_runtime")
    begun = hs("begin-run", "--dsn", runtime, "agent", "team", "alice", "t2", "--loaded", "t1")
    run = begun.stdout.strip()
    uuid.UUID(run)
    assert begun.stderr == ""
    # t1 is loaded into the prompt: not found again; the run is usable by search
    searched = hs("search", "--dsn", as_role(db_dsn, "history_searcher"), "--json", "release", env={"HISTORY_SEARCH_RUN": run})
    assert json.loads(searched.stdout)["hits"] == []
    ended = hs("end-run", "--dsn", runtime, run)
    assert ended.stdout.strip() == f"ended {run}"
    after = hs("search", "--dsn", db_dsn, "--run", run, "release", check=False)
    assert_one_line_error(after, EXIT_ERROR, "[HS002]", "ended")
    again = hs("end-run", "--dsn", runtime, run, check=False)
    assert_one_line_error(again, EXIT_ERROR, "history-search end-run: [HS002]")

    explicit = hs("begin-run", "--dsn", runtime, "agent", "team", "alice", "t2", "--audience", "alice")
    uuid.UUID(explicit.stdout.strip())
    unknown = hs("begin-run", "--dsn", runtime, "ghost", "team", "alice", "t2", check=False)
    assert_one_line_error(unknown, EXIT_ERROR, "history-search begin-run: [HS003]", "ghost")
    # --tenant names the ids' tenant: the default tenant's ids are not another's.
    elsewhere = hs("begin-run", "--dsn", runtime, "agent", "team", "alice", "t2", "--tenant", "nowhere", check=False)
    assert_one_line_error(elsewhere, EXIT_ERROR, "history-search begin-run: [HS003]", "nowhere")
    default = hs("begin-run", "--dsn", runtime, "agent", "team", "alice", "t2", "--tenant", "default")
    uuid.UUID(default.stdout.strip())
    missing = hs("begin-run", "--dsn", runtime, "agent", "team", check=False)
    assert_one_line_error(missing, EXIT_ERROR, "history-search begin-run:", "required")


def test_search_with_a_time_that_is_not_rfc3339():
    for value in ("yesterday", "2026-03-01", "2026-13-01T00:00:00Z"):
        proc = hs("search", "--dsn", UNREACHABLE, "--run", NO_RUN, "--after", value, "q", check=False)
        assert_one_line_error(proc, EXIT_ERROR, "history-search search:", "--after", value)
    proc = hs("search", "--dsn", UNREACHABLE, "--run", NO_RUN, "--limit", "many", "q", check=False)
    assert_one_line_error(proc, EXIT_ERROR, "--limit", "many")


def test_search_json_into_a_pipe_closed_early(db_dsn):
    """``search --json | head -2``: no traceback, the usual 141 of a writer whose reader left."""
    run = build_world(db_dsn, bodies=30)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "history_search", "search", "--dsn", db_dsn, "--run", run,
                             "--json", "--limit", "20", "release notes"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = [proc.stdout.readline() for _ in range(2)]
    proc.stdout.close()  # as head -2 does after two lines; the output (~100 kB) is far from written
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE, stderr
    assert first[0] == b"{\n" and b'"status"' in first[1]
    assert stderr == "", stderr
    # and the whole output, when read, is that long: the test did close the pipe early
    full = hs("search", "--dsn", db_dsn, "--run", build_world_again(db_dsn), "--json", "--limit", "20", "release notes")
    assert len(full.stdout) > 200_000


def build_world_again(dsn: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return str(conn.execute("SELECT history.begin_run('agent', 'team', 'alice', 't2')").fetchone()[0])


def test_demo_with_a_bad_server_directory(tmp_path):
    proc = hs("demo", check=False, env={"HISTORY_SEARCH_PG_BINDIR": str(tmp_path / "no-such-dir")})
    assert_one_line_error(proc, EXIT_ERROR, "history-search demo:", "HISTORY_SEARCH_PG_BINDIR", "no-such-dir")


@pytest.mark.parametrize("dsn, says", [
    ("nonsense", 'missing "=" after "nonsense"'),
    (UNREACHABLE, "connection"),
    ("postgresql://127.0.0.1:1/x?sslmode=bogus", "sslmode"),
])
def test_bad_dsn_is_one_line_for_every_command(dsn, says):
    for args in (["search", "--run", NO_RUN, "q"], ["audit"], ["verify-digest", NO_RUN, "q"],
                 ["begin-run", "a", "c", "r", "m"], ["end-run", NO_RUN], ["migrate"], ["mcp", "--run", NO_RUN],
                 ["distribute"]):
        proc = hs(args[0], "--dsn", dsn, *args[1:], check=False)
        assert_one_line_error(proc, EXIT_ERROR, f"history-search {args[0]}:", says)


def test_a_refused_migration_exits_2(make_database):
    """A migration error is an error like any other: exit 2, one line, nothing on stdout (never 1,
    which only verify-digest uses, for "no match")."""
    dsn = make_database()
    with psycopg.connect(dsn, autocommit=True) as conn:  # a sqitch registry listing this project
        conn.execute("CREATE SCHEMA sqitch")
        conn.execute("CREATE TABLE sqitch.changes (change_id text, change text, project text)")
        conn.execute("INSERT INTO sqitch.changes VALUES ('x', 'roles', 'history-search')")
    for extra in ([], ["--dry-run"], ["--json"], ["--dry-run", "--json"]):
        proc = hs("migrate", "--dsn", dsn, *extra, check=False)
        assert_one_line_error(proc, EXIT_ERROR, "history-search migrate:", "deployed with sqitch")
        assert proc.stdout == "", (extra, proc.stdout)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT to_regnamespace('history')").fetchone()[0] is None  # nothing applied


def test_distribute_refuses_a_database_that_is_not_a_citus_coordinator(db_dsn):
    """Citus itself is tested in tests/test_citus.py (the Citus job); a plain database is refused here."""
    for extra in ([], ["--json"]):
        proc = hs("distribute", "--dsn", db_dsn, *extra, check=False)
        assert_one_line_error(proc, EXIT_ERROR, "history-search distribute:", "not a Citus coordinator")
        assert proc.stdout == ""


def test_no_dsn_and_no_run():
    for args in (["search", "--run", NO_RUN, "q"], ["audit"], ["migrate"], ["begin-run", "a", "c", "r", "m"],
                 ["distribute"]):
        assert_one_line_error(hs(*args, check=False), EXIT_ERROR, "no database given", "HISTORY_SEARCH_DSN")
    for args in (["search", "q"], ["mcp"]):
        assert_one_line_error(hs(*args, "--dsn", UNREACHABLE, check=False), EXIT_ERROR, "no run given",
                              "HISTORY_SEARCH_RUN")


def test_bad_uuids():
    cases = [
        (["verify-digest", "--dsn", UNREACHABLE, "not-a-uuid", "q"], "search event id 'not-a-uuid' is not a uuid"),
        (["search", "--dsn", UNREACHABLE, "--run", "12345", "q"], "run token '12345' is not a uuid"),
        (["end-run", "--dsn", UNREACHABLE, "xyz"], "run token 'xyz' is not a uuid"),
        (["audit", "--dsn", UNREACHABLE, "--run", "xyz"], "run token 'xyz' is not a uuid"),
        (["mcp", "--dsn", UNREACHABLE, "--run", "xyz"], "run token 'xyz' is not a uuid"),
    ]
    for args, says in cases:
        assert_one_line_error(hs(*args, check=False), EXIT_ERROR, f"history-search {args[0]}:", says)
    from_env = hs("search", "--dsn", UNREACHABLE, "q", check=False, env={"HISTORY_SEARCH_RUN": "bad"})
    assert_one_line_error(from_env, EXIT_ERROR, "run token 'bad' is not a uuid")


def test_verify_digest_exit_codes_are_distinct(db_dsn):
    """0 match, 1 no match, 2 error — an error is never mistaken for 'no match'."""
    verifier = as_role(db_dsn, "history_digest_verifier")
    event = str(uuid.uuid4())
    unknown_event = hs("verify-digest", "--dsn", verifier, event, "q", check=False)
    assert_one_line_error(unknown_event, EXIT_ERROR, "history-search verify-digest: [HS003]", event)
    assert unknown_event.stdout == ""
    assert_one_line_error(hs("verify-digest", "--dsn", verifier, "nope", "q", check=False), EXIT_ERROR)
    assert_one_line_error(hs("verify-digest", "--dsn", UNREACHABLE, NO_RUN, "q", check=False), EXIT_ERROR)
    # a login that may not verify (the auditor too: it is a dictionary oracle): an error, not "false"
    for role in ("history_searcher", "history_auditor"):
        denied = hs("verify-digest", "--dsn", as_role(db_dsn, role), NO_RUN, "q", check=False)
        assert_one_line_error(denied, EXIT_ERROR, "permission denied")


def test_usage_errors_are_one_line():
    assert_one_line_error(hs("frobnicate", check=False), EXIT_ERROR, "invalid choice")
    assert_one_line_error(hs(check=False), EXIT_ERROR, "required")
    assert_one_line_error(hs("search", "--dsn", UNREACHABLE, "--run", NO_RUN, "--speaker", "me", "q", check=False),
                          EXIT_ERROR, "--speaker")


def test_help_lists_every_command_and_the_exit_codes():
    text = hs("--help").stdout
    for command in ["migrate", "demo", "begin-run", "end-run", "search", "mcp", "audit", "verify-digest"]:
        assert command in text
    assert "exit status" in text and "141" in text
    assert "0 the query matches, 1 it does not, 2 error" in " ".join(hs("verify-digest", "--help").stdout.split())
    assert "left there" in " ".join(hs("demo", "--help").stdout.split())
