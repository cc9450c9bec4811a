"""Releases are forever: frozen scripts, upgrades that keep every row, and unknown states refused.

Each release is a plan tag ``@vX.Y.Z`` and a git tag ``vX.Y.Z`` on the commit
that planned it; these tests rebuild each release from git (``git archive``)
and hold today's tree to it:

* frozen: every change a release planned deploys, reverts and verifies exactly
  as it did then (each script compared as psql runs it, ``\\ir`` files inlined);
* upgrade: a database deployed by the release's own ``history-search migrate``
  (or by ``sqitch deploy``), holding a world, upgrades to exactly the schema of
  a fresh install, keeps every row and finds them, and a second run changes nothing;
* refusal: a database of a development build (before 0.1.0) is refused in one
  line, exit 2, and left as it was.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest

import history_search
from history_search.cluster import ThrowawayCluster
from history_search.health import check_database
from history_search.migrations import (
    PLAN_FILE,
    MigrationError,
    apply_migrations,
    expand_includes,
    pending,
    read_plan,
)

from .harness import call_search, schema_dump
from .test_migrations import history_search_command, sqitch

ROOT = Path(__file__).resolve().parents[1]
PLAN = read_plan(ROOT / PLAN_FILE)
RELEASES = list(PLAN.tags)  # plan tags, oldest first: "v0.1.0", ...
#: The last development build before the first release (its database must be refused).
DEVELOPMENT_BUILD_BEFORE = "2026-12-05T00:00:00Z"


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr.strip()} (the tests need the git history)"
    return proc.stdout.strip()


def release_commit(tag: str) -> str:
    """The commit of release ``tag``: its git tag, or else the commit that planned ``@tag``."""
    tagged = subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}"],
                            cwd=ROOT, capture_output=True, text=True)
    if tagged.returncode == 0:
        return tagged.stdout.strip()
    planned = git("log", "--format=%H", "--reverse", "-S", f"@{tag} ", "--", PLAN_FILE).split()
    assert planned, f"no commit plans @{tag}"
    return planned[0]


def checkout(commit: str, into: Path) -> Path:
    """The plan, the SQL and the client of ``commit`` under ``into`` (``git archive``)."""
    if not (into / PLAN_FILE).exists():
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", "--format=tar", commit, PLAN_FILE, "sqitch.conf", "db", "pyclient"],
                                 cwd=ROOT, capture_output=True)
        assert archive.returncode == 0, archive.stderr.decode()
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(into, filter="data")
    return into


@pytest.fixture(scope="module")
def release_tree(tmp_path_factory):
    """``release_tree(tag)``: the tree of that release, extracted once per module."""
    base = tmp_path_factory.mktemp("releases")
    return lambda tag: checkout(release_commit(tag), base / tag)


@pytest.fixture(scope="module")
def fresh_schema(pg_server):
    """``pg_dump --schema-only`` of a fresh install by today's ``migrate`` (no test extensions)."""
    name = pg_server.new_name("hs_fresh")
    dsn = pg_server.create_database(name)
    try:
        apply_migrations(dsn)
        yield schema_dump(dsn)
    finally:
        pg_server.drop_database(name)


def frozen_differences(release_root: Path, root: Path) -> list[str]:
    """What ``root`` changed of what the release at ``release_root`` planned (empty: nothing)."""
    old, new = read_plan(release_root / PLAN_FILE), read_plan(root / PLAN_FILE)
    problems = []
    old_lines = (release_root / PLAN_FILE).read_text().splitlines()
    new_lines = (root / PLAN_FILE).read_text().splitlines()
    if new_lines[: len(old_lines)] != old_lines:
        problems.append(f"{PLAN_FILE}: the lines of the release are not the start of today's plan")
    now = {c.id: c for c in new.changes}
    for change in old.changes:
        if change.id not in now:
            problems.append(f"{change.id}: planned by the release, gone from today's plan")
            continue
        for kind in ("deploy", "revert", "verify"):
            then = expand_includes(release_root / "db" / kind / f"{change.script}.sql")
            today = expand_includes(root / "db" / kind / f"{now[change.id].script}.sql")
            if then != today:
                problems.append(f"db/{kind}/{now[change.id].script}.sql (change {change.id}) differs from the release's")
    return problems


def test_there_is_a_release_and_the_package_is_at_the_newest():
    assert RELEASES, "sqitch.plan has no release tag"
    assert RELEASES[-1] == f"v{history_search.__version__}", "the package version names the newest plan tag"
    (marker,) = [c for c in PLAN.changes if c.id == [c.id for c in PLAN.changes if c.name == "release"][-1]]
    assert f"RETURN '{history_search.__version__}'" in expand_includes(ROOT / "db" / "deploy" / f"{marker.script}.sql")


@pytest.mark.parametrize("tag", RELEASES)
def test_released_scripts_are_frozen(tag, release_tree):
    assert frozen_differences(release_tree(tag), ROOT) == []


def test_an_edited_release_is_caught(tmp_path, release_tree):
    """The comparison above notices an edit of a function file a released deploy script includes."""
    tree = checkout(release_commit(RELEASES[-1]), tmp_path / "edited")
    function = tree / "db" / "functions" / "_score.sql"
    function.write_text(function.read_text() + "\n-- an innocent-looking edit\n")
    latest = [c.id for c in read_plan(tree / PLAN_FILE).changes if c.name == "_score"][-1]  # its newest instance
    assert frozen_differences(release_tree(RELEASES[-1]), tree) == [
        f"db/deploy/_score.sql (change {latest}) differs from the release's"]


# -- a world written with the release's SQL surface -------------------------------------------

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def write_world(dsn: str) -> dict:
    """Accounts, a group, messages (one edited, one deleted), a run with an audited search."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for account, kind in (("bot", "agent"), ("alice", "person"), ("bob", "person")):
            c.execute("SELECT history.upsert_account(%s, %s, %s)", (account, kind, account.title()))
        c.execute("SELECT history.upsert_conversation('team', 'group', 'Team')")
        for account in ("bot", "alice", "bob"):
            c.execute("SELECT history.add_member('team', %s, %s)", (account, T0))
        c.execute("SELECT history.post_message('m1', 'team', 'alice', 'The zeppelin launch moves to June', %s)",
                  (T0 + timedelta(hours=1),))
        c.execute("SELECT history.post_message('m2', 'team', 'bob', 'draft text', %s)", (T0 + timedelta(hours=2),))
        c.execute("SELECT history.edit_message('m2', 'zeppelin budget approved', %s)", (T0 + timedelta(hours=3),))
        c.execute("SELECT history.post_message('m3', 'team', 'bob', 'a zeppelin secret', %s)", (T0 + timedelta(hours=4),))
        c.execute("SELECT history.delete_message('m3', %s)", (T0 + timedelta(hours=5),))
        c.execute("SELECT history.post_message('m4', 'team', 'alice', '@bot when is the launch?', %s)",
                  (T0 + timedelta(hours=6),))
        run = c.execute("SELECT history.begin_run('bot', 'team', 'alice', 'm4')").fetchone()[0]
        found = call_search(c, run, "zeppelin")
        c.execute("SELECT history.end_run(%s)", (run,))
        return {"run": run, "hits": sorted(h["message_id"] for h in found["hits"])}


def table_counts(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn, autocommit=True) as c:
        tables = [r[0] for r in c.execute(
            "SELECT c.oid::regclass::text FROM pg_catalog.pg_class c"
            " WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1")]
        return {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def assert_upgraded(dsn: str, fresh_schema: str, before: dict, counts: dict) -> None:
    """The schema of a fresh install, every row kept, and the world still found as before."""
    assert schema_dump(dsn) == fresh_schema
    after = table_counts(dsn)
    assert {t: after.get(t) for t in counts} == counts, "rows lost or added by the upgrade"
    with psycopg.connect(dsn, autocommit=True) as c:
        run = c.execute("SELECT history.begin_run('bot', 'team', 'alice', 'm4')").fetchone()[0]
        assert sorted(h["message_id"] for h in call_search(c, run, "zeppelin")["hits"]) == before["hits"]
        audited = c.execute(
            "SELECT count(*) FROM history.search_audit WHERE run_token_sha256 = encode(sha256(convert_to(%s, 'UTF8')), 'hex')",
            (str(before["run"]),)).fetchone()
        assert audited == (1,), "the search made before the upgrade is still audited"
        # Every row of the release is the default tenant's; a new tenant reuses its ids beside them.
        assert c.execute("SELECT array_agg(DISTINCT tenant_key) FROM (SELECT tenant_key FROM history.accounts UNION ALL"
                         " SELECT tenant_key FROM history.identity_proofs UNION ALL"
                         " SELECT tenant_key FROM history.messages) k").fetchone() == ([1],)
        c.execute("SELECT history.upsert_account('alice', 'person', NULL, 'acme')")
        assert c.execute("SELECT count(*) FROM history.accounts WHERE account_id = 'alice'").fetchone() == (2,)


def as_release(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``history-search ARGS`` as the release (or build) at ``tree`` shipped it."""
    env = {**os.environ, "PYTHONPATH": str(tree / "pyclient"), "HISTORY_SEARCH_SQL_DIR": str(tree)}
    return subprocess.run([sys.executable, "-m", "history_search", *args],
                          capture_output=True, text=True, env=env, cwd=tree, timeout=300)


def deploy_with_its_own_migrate(tree: Path, dsn: str) -> subprocess.CompletedProcess[str]:
    """``history-search migrate`` as the release (or build) at ``tree`` shipped it."""
    return as_release(tree, "migrate", "--dsn", dsn)


@pytest.mark.parametrize("tag", RELEASES)
def test_migrate_upgrades_a_release_in_place(tag, release_tree, make_database, fresh_schema):
    dsn = make_database()
    deployed = deploy_with_its_own_migrate(release_tree(tag), dsn)
    assert deployed.returncode == 0, deployed.stderr
    before = write_world(dsn)
    assert before["hits"] == ["m1", "m2"]
    counts = table_counts(dsn)

    applied = apply_migrations(dsn)
    assert applied == [c.id for c in PLAN.changes[PLAN.tags[tag]:]]
    assert_upgraded(dsn, fresh_schema, before, counts)
    assert apply_migrations(dsn) == [] and pending(dsn) == []
    health = check_database(dsn)
    assert health.ok, health.lines()
    assert health.release == history_search.__version__


@pytest.mark.parametrize("tag", RELEASES)
def test_sqitch_upgrades_a_release_in_place(tag, release_tree, make_database, fresh_schema, pg_server):
    dsn = make_database()
    target = pg_server.sqitch_target(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])
    sqitch("deploy", "--verify", target, cwd=release_tree(tag))
    before = write_world(dsn)
    counts = table_counts(dsn)

    sqitch("deploy", "--verify", target)
    assert_upgraded(dsn, fresh_schema, before, counts)
    assert "Nothing to deploy" in sqitch("deploy", target).stdout
    health = check_database(dsn)
    assert health.ok, health.lines()


def test_an_upgrade_takes_agents_out_of_identity_components(release_tree, make_database):
    """0.1.0 accepted a proof naming an agent, and a person linked to the agent's account saw the
    agent's other direct conversations. After the upgrade the agent is a component of its own (the
    proof stays recorded), the leak is gone, and links between persons still hold."""
    dsn = make_database()
    deployed = deploy_with_its_own_migrate(release_tree("v0.1.0"), dsn)
    assert deployed.returncode == 0, deployed.stderr

    def carol_finds_bob(c) -> bool:
        run = c.execute("SELECT history.begin_run('bot', 'dm-carol', 'carol', 'ask')").fetchone()[0]
        return [h["message_id"] for h in call_search(c, run, "salary ninety")["hits"]] == ["bob-1"]

    def components(c) -> dict[str, str]:
        return dict(c.execute("SELECT a.account_id, r.account_id FROM history.accounts a"
                              " JOIN history.accounts r ON r.account_key = a.component_key"))

    with psycopg.connect(dsn, autocommit=True) as c:
        for account, kind in (("bot", "agent"), ("bob", "person"), ("carol", "person"), ("dave", "person")):
            c.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
        for conv, members in (("dm-bob", ("bot", "bob")), ("dm-carol", ("bot", "carol"))):
            c.execute("SELECT history.upsert_conversation(%s, 'direct')", (conv,))
            for account in members:
                c.execute("SELECT history.add_member(%s, %s, %s)", (conv, account, T0))
        c.execute("SELECT history.post_message('bob-1', 'dm-bob', 'bob', 'my salary is ninety', %s)", (T0 + timedelta(hours=1),))
        c.execute("SELECT history.post_message('ask', 'dm-carol', 'carol', 'salary?', %s)", (T0 + timedelta(hours=2),))
        c.execute("SELECT history.link_identity('p-agent', 'carol', 'bot', %s)", (T0,))
        c.execute("SELECT history.link_identity('p-person', 'carol', 'dave', %s)", (T0,))
        assert carol_finds_bob(c), "0.1.0 should show the leak this upgrade closes"

    apply_migrations(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:
        assert not carol_finds_bob(c)
        groups = components(c)
        assert groups["bot"] == "bot" and groups["bob"] == "bob"
        assert groups["carol"] == groups["dave"] != "bot"
        assert c.execute("SELECT count(*) FROM history.identity_proofs WHERE revoked_at IS NULL").fetchone() == (2,)


# -- what no release made ------------------------------------------------------------------------


def test_a_development_build_is_refused_in_one_line(tmp_path, make_database):
    """A database of the last build before 0.1.0 (its own migrate, same change names, other content)."""
    build = git("rev-list", "-1", f"--before={DEVELOPMENT_BUILD_BEFORE}", "HEAD")
    dsn = make_database()
    deployed = deploy_with_its_own_migrate(checkout(build, tmp_path / "build"), dsn)
    assert deployed.returncode == 0, deployed.stderr
    schema = schema_dump(dsn)
    registry = _yoyo_rows(dsn)

    with pytest.raises(MigrationError, match="development build"):
        apply_migrations(dsn)
    proc = subprocess.run([*history_search_command(), "migrate", "--dsn", dsn], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "development build" in line and "cannot be upgraded in place" in line
    assert schema_dump(dsn) == schema and _yoyo_rows(dsn) == registry, "a refused migrate changed the database"

    checked = subprocess.run([*history_search_command(), "check", "--dsn", dsn], capture_output=True, text=True)
    assert checked.returncode == 1
    assert any(l.startswith("problem: ") and "development build" in l for l in checked.stdout.splitlines())


def _yoyo_rows(dsn: str) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return c.execute("SELECT migration_id, migration_hash FROM public._yoyo_migration ORDER BY 1").fetchall()


def test_a_gap_in_the_registry_is_refused(db_dsn):
    with psycopg.connect(db_dsn, autocommit=True) as c:
        c.execute("DELETE FROM public._yoyo_migration WHERE migration_id = '_score'")
    with pytest.raises(MigrationError, match="'_search_history' is deployed but '_score', planned before it, is not"):
        apply_migrations(db_dsn)


def test_a_schema_without_a_registry_is_refused(db_dsn):
    with psycopg.connect(db_dsn, autocommit=True) as c:
        c.execute("DROP TABLE public._yoyo_migration")
    with pytest.raises(MigrationError, match="schema history exists but no migration registry"):
        apply_migrations(db_dsn)


# -- the migrating role ------------------------------------------------------------------------


def test_a_createrole_login_migrates_a_new_cluster_in_one_go():
    """Not a superuser: CREATEROLE and the database's ownership are enough (the first change makes it
    a member of history_owner); a role without CREATEROLE is refused before anything changes."""
    with ThrowawayCluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute("CREATE ROLE plain LOGIN")
        admin.execute("CREATE DATABASE plain_app OWNER plain")
        with pytest.raises(MigrationError, match="role plain cannot create roles and history_owner, .* do not exist"):
            apply_migrations(cluster.dsn_for("plain_app", user="plain"))
        assert admin.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'history%'").fetchone() == (0,)
        with psycopg.connect(cluster.dsn_for("plain_app"), autocommit=True) as c:
            assert c.execute("SELECT to_regclass('public._yoyo_migration')").fetchone() == (None,)

        admin.execute("CREATE ROLE migrator LOGIN CREATEROLE")
        admin.execute("CREATE DATABASE app OWNER migrator")
        dsn = cluster.dsn_for("app", user="migrator")
        assert apply_migrations(dsn) == [c.id for c in PLAN.changes]
        health = check_database(cluster.dsn_for("app"))
        assert health.ok, health.lines()


# -- history-search check ----------------------------------------------------------------------


def run_check(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*history_search_command(), "check", "--dsn", dsn, *args], capture_output=True, text=True)


def test_check_passes_a_fresh_install(db_dsn):
    proc = run_check(db_dsn)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        f"deployed: yes, {len(PLAN.changes)} changes by history-search migrate",
        f"release: {history_search.__version__} (this history-search: {history_search.__version__})",
        "pending: none", "ok"]
    as_json = json.loads(run_check(db_dsn, "--json").stdout)
    assert as_json["ok"] is True and as_json["problems"] == [] and as_json["registry"] == "yoyo"


@pytest.mark.parametrize("tamper, named", [
    ("ALTER FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) OWNER TO postgres",
     "function history.post_message(text,text,text,text,timestamp with time zone,text[],text) is owned by postgres"),
    # the signature before p_tenant, left beside today's: calls without a tenant would be ambiguous
    ("SET ROLE history_owner; CREATE FUNCTION history.upsert_account(text, text, text) RETURNS void"
     " LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, history, pg_temp SET extra_float_digits = 1"
     " SET DateStyle = 'ISO, MDY' SET IntervalStyle = postgres SET TimeZone = 'UTC'"
     " SET standard_conforming_strings = on AS 'SELECT';"
     " REVOKE ALL ON FUNCTION history.upsert_account(text, text, text) FROM PUBLIC; RESET ROLE",
     "function history.upsert_account has 2 signatures"),
    ("ALTER FUNCTION history.end_run(uuid) RESET search_path",
     "SECURITY DEFINER function history.end_run(uuid) does not pin search_path"),
    ("GRANT EXECUTE ON FUNCTION history._require_id(text, text) TO PUBLIC",
     "PUBLIC holds EXECUTE on function _require_id"),
    ("REVOKE SELECT ON history.search_audit FROM history_auditor",
     "history_auditor lacks SELECT on relation search_audit"),
    ("GRANT SELECT ON history.messages TO history_searcher",
     "history_searcher holds SELECT on relation messages"),
    ("ALTER FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],"
     " bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery) SECURITY DEFINER",
     "function history._score("),
    ("ALTER ROLE history_searcher LOGIN", "role history_searcher can log in"),
    ("ALTER TABLE history.messages OWNER TO postgres", "table history.messages is owned by postgres"),
    # its text form has a fourth parameter from PostgreSQL 17 on
    ("DO $$ BEGIN EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', (SELECT oid::regprocedure"
     " FROM pg_proc WHERE proname = 'pg_logical_emit_message' AND proargtypes[2] = 'text'::regtype)); END $$",
     "history_owner may not execute pg_logical_emit_message(boolean,text,text"),
])
def test_check_names_what_the_release_did_not_make(db_dsn, tamper, named):
    with psycopg.connect(db_dsn, autocommit=True) as c:
        c.execute(tamper)
        try:
            proc = run_check(db_dsn)
        finally:
            if "ROLE" in tamper:
                c.execute("ALTER ROLE history_searcher NOLOGIN")  # roles are cluster-wide
    assert proc.returncode == 1, proc.stdout
    problems = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    assert problems and all(named in p or "sequence" in p for p in problems), problems
    assert proc.stdout.splitlines()[-1] == "not ok"


def test_check_counts_pending_changes_and_an_empty_database(make_database):
    dsn = make_database()
    empty = run_check(dsn)
    assert empty.returncode == 1 and empty.stdout.splitlines()[0] == "deployed: no"
    apply_migrations(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:  # as if the last change were still to come
        c.execute("DELETE FROM public._yoyo_migration WHERE migration_id = %s", (PLAN.changes[-1].id,))
    proc = run_check(dsn)
    assert proc.returncode == 1 and f"pending: {PLAN.changes[-1].id}" in proc.stdout.splitlines()
