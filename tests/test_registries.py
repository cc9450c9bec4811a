"""One migration registry per database, the server version check, and `migrate`'s output.

`history-search migrate` (yoyo) refuses a database deployed with sqitch, and
sqitch refuses one migrated by `history-search migrate` (the plan's first
change checks), each with one line saying what to do and nothing changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from history_search.cli import EXIT_ERROR
from history_search.migrations import (
    MigrationError,
    apply_migrations,
    check_server_version,
    pending,
    read_plan,
)

from .harness import schema_dump

ROOT = Path(__file__).resolve().parents[1]
PLAN = read_plan(ROOT / "sqitch.plan")
#: What migrate applies and reports: each change's id (a reworked change's is ``name@reworkN``).
PLAN_IDS = [c.id for c in PLAN.changes]


def history_search(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "history-search"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "history_search"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env)


def sqitch(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("sqitch")
    assert exe, "sqitch is not installed (run scripts/bootstrap)"
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)


def sqitch_changes(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as c:
        if c.execute("SELECT to_regclass('sqitch.changes')").fetchone()[0] is None:
            return 0
        return c.execute("SELECT count(*) FROM sqitch.changes WHERE project = 'history-search'").fetchone()[0]


# -- one registry per database ----------------------------------------------------------


def test_migrate_refuses_a_database_deployed_with_sqitch(pg_server, make_database):
    dsn = make_database()
    target = pg_server.sqitch_target(conninfo_to_dict(dsn)["dbname"])
    deployed = sqitch("deploy", target)
    assert deployed.returncode == 0, deployed.stderr
    schema = schema_dump(dsn)

    for call in (apply_migrations, pending):
        with pytest.raises(MigrationError, match=r"deployed with sqitch \(\d+ changes of history-search"):
            call(dsn)
    proc = history_search("migrate", "--dsn", dsn)
    assert proc.returncode == EXIT_ERROR
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{len(PLAN.changes)} changes of history-search" in lines[0]
    assert "keep using `sqitch deploy`" in lines[0] and "`sqitch revert`" in lines[0]
    with psycopg.connect(dsn, autocommit=True) as c:
        assert c.execute("SELECT to_regclass('public._yoyo_migration')").fetchone()[0] is None, \
            "migrate started a yoyo registry next to sqitch's"
    assert schema_dump(dsn) == schema

    # Reverted by sqitch, the database is free for migrate (sqitch's registry stays, empty).
    assert sqitch("revert", "-y", target).returncode == 0
    assert apply_migrations(dsn) == PLAN_IDS


def test_sqitch_refuses_a_database_migrated_by_migrate(pg_server, make_database):
    dsn = make_database()
    apply_migrations(dsn)
    schema = schema_dump(dsn)
    target = pg_server.sqitch_target(conninfo_to_dict(dsn)["dbname"])

    proc = sqitch("deploy", target)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "this database was migrated by `history-search migrate`" in out, out
    assert "keep using `history-search migrate` on it" in out
    assert sqitch_changes(dsn) == 0, "sqitch recorded a change it did not deploy"
    assert schema_dump(dsn) == schema
    assert pending(dsn) == [] and apply_migrations(dsn) == []


def test_a_yoyo_registry_of_another_project_does_not_stop_sqitch(pg_server, make_database):
    """The guard looks for this project's `schema` change, not for any yoyo table."""
    dsn = make_database()
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE TABLE public._yoyo_migration (migration_hash text, migration_id text, applied_at_utc timestamp)")
        c.execute("INSERT INTO public._yoyo_migration VALUES ('x', 'create_orders', now())")
    target = pg_server.sqitch_target(conninfo_to_dict(dsn)["dbname"])
    proc = sqitch("deploy", target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sqitch_changes(dsn) == len(PLAN.changes)


# -- PostgreSQL 14 or newer ------------------------------------------------------------------


@pytest.mark.parametrize("num, shown", [(130012, "13.12"), (120000, "12.0"), (90624, "9.6.24"), (139999, "13.9999")])
def test_servers_older_than_14_are_refused_in_one_line(num, shown):
    with pytest.raises(MigrationError) as err:
        check_server_version(num)
    message = str(err.value)
    assert f"PostgreSQL {shown};" in message and "needs PostgreSQL 14 or newer" in message
    assert "\n" not in message


@pytest.mark.parametrize("num", [140000, 140013, 150008, 170002, 180000])
def test_servers_from_14_on_pass(num):
    check_server_version(num)


def test_the_real_server_passes_the_check(db_dsn):
    with psycopg.connect(db_dsn) as c:
        version = c.info.server_version
    assert version >= 140000
    check_server_version(version)


# -- migrate's output ----------------------------------------------------------------------


def test_each_change_is_reported_once_it_is_committed(make_database):
    dsn = make_database()
    seen: list[tuple[str, bool]] = []

    def on_applied(name: str) -> None:
        # Another connection already sees the change recorded: it is committed.
        with psycopg.connect(dsn, autocommit=True) as other:
            recorded = other.execute(
                "SELECT count(*) = 1 FROM public._yoyo_migration WHERE migration_id = %s", (name,)).fetchone()[0]
        seen.append((name, recorded))

    assert apply_migrations(dsn, on_applied=on_applied) == PLAN_IDS
    assert seen == [(n, True) for n in PLAN_IDS]
    assert apply_migrations(dsn, on_applied=on_applied) == []
    assert len(seen) == len(PLAN_IDS)


def test_migrate_json(make_database):
    dsn = make_database()
    dry = history_search("migrate", "--dsn", dsn, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout) == {"pending": PLAN_IDS, "up_to_date": False}

    first = history_search("migrate", "--dsn", dsn, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"applied": PLAN_IDS, "up_to_date": False}
    assert first.stderr == ""

    env = {**os.environ, "HISTORY_SEARCH_DSN": dsn}
    second = history_search("migrate", "--json", env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == {"applied": [], "up_to_date": True}
    dry = history_search("migrate", "--dry-run", "--json", env=env)
    assert json.loads(dry.stdout) == {"pending": [], "up_to_date": True}


def test_migrate_json_on_a_sqitch_database_fails_in_one_line(pg_server, make_database):
    dsn = make_database()
    assert sqitch("deploy", pg_server.sqitch_target(conninfo_to_dict(dsn)["dbname"])).returncode == 0
    proc = history_search("migrate", "--dsn", dsn, "--json")
    assert proc.returncode == EXIT_ERROR and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "sqitch" in proc.stderr
