"""The migration tooling: the plan's rules, yoyo and sqitch on the same files, the CLI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from history_search.migrations import CITUS_DIR, TOP_DIR, apply_migrations, load_script, pending, read_plan

from .harness import schema_dump

ROOT = Path(__file__).resolve().parents[1]
DB = ROOT / TOP_DIR
PLAN = read_plan(ROOT / "sqitch.plan")
#: What migrate applies and reports: each change's id (a reworked change's is ``name@reworkN``).
PLAN_IDS = [c.id for c in PLAN.changes]


# -- (a) the plan and the files agree ------------------------------------------------


@pytest.mark.parametrize("kind", ["deploy", "revert", "verify"])
def test_every_plan_change_has_its_script(kind):
    missing = [c.name for c in PLAN.changes if not (DB / kind / f"{c.script}.sql").is_file()]
    assert missing == [], f"plan changes without db/{kind}/<change>.sql"


@pytest.mark.parametrize("kind", ["deploy", "revert", "verify"])
def test_every_script_is_in_the_plan(kind):
    planned = {c.script for c in PLAN.changes}
    stray = sorted(p.stem for p in (DB / kind).glob("*.sql") if p.stem not in planned)
    assert stray == [], f"db/{kind}/ scripts that no plan change names"


def test_every_citus_script_stands_for_a_script_of_the_plan():
    """db/citus/<kind>/<script>.sql runs instead of db/<kind>/<script>.sql on a distributed database
    (history_search.migrations.CITUS_DIR): one with no counterpart would never run."""
    scripts = sorted((DB / CITUS_DIR).rglob("*.sql"))
    assert scripts, "db/citus/ holds the scripts an upgrade of a distributed database needs"
    planned = {c.script for c in PLAN.changes}
    stray = [str(p.relative_to(DB)) for p in scripts
             if p.parent.parent != DB / CITUS_DIR or p.parent.name not in ("deploy", "revert", "verify")
             or p.stem not in planned]
    assert stray == [], "db/citus/ scripts that stand for no script of the plan"
    for script in scripts:
        load_script(script)  # reads as yoyo runs it


def test_every_script_loads_for_yoyo():
    """Each script reads: its \\ir files exist, and no other psql meta-command is used."""
    for change in PLAN.changes:
        for kind in ("deploy", "revert", "verify"):
            text = load_script(DB / kind / f"{change.script}.sql")
            # Transaction control inside a dollar-quoted body (a procedure's COMMIT) is the body's own.
            outside_bodies = re.sub(r"(\$\w*\$).*?\1", "", text, flags=re.S)
            assert not re.search(r"^\s*(BEGIN|COMMIT)\s*;", outside_bodies, re.I | re.M), (kind, change.name)


def test_every_function_file_is_deployed():
    """db/functions/<fn>.sql files exist to be \\ir-included by a deploy script."""
    included: set[Path] = set()
    for script in (DB / "deploy").glob("*.sql"):
        for m in re.finditer(r"^\s*\\(?:ir|include_relative)\s+'?([^'\s]+)'?", script.read_text(), re.M):
            included.add((script.parent / m.group(1)).resolve())
    orphans = sorted(p.name for p in (DB / "functions").glob("*.sql") if p.resolve() not in included)
    assert orphans == [], "function files no deploy script includes"


def test_plan_names_are_unique_ids():
    ids = [c.id for c in PLAN.changes]
    assert len(ids) == len(set(ids))


# -- (b) yoyo: applying twice is a no-op ------------------------------------------------


def test_apply_migrations_twice_applies_nothing_the_second_time(make_database):
    dsn = make_database()
    assert pending(dsn) == PLAN_IDS
    assert apply_migrations(dsn) == PLAN_IDS
    first = schema_dump(dsn)
    assert apply_migrations(dsn) == []
    assert pending(dsn) == []
    assert schema_dump(dsn) == first
    assert "CREATE SCHEMA history" in first


# -- (c, d) sqitch on the same files ------------------------------------------------------


def sqitch(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("sqitch")
    assert exe, "sqitch is not installed (run scripts/bootstrap)"
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"sqitch {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_sqitch_and_yoyo_build_the_same_schema_and_sqitch_reverts(pg_server, make_database):
    yoyo_dsn = make_database()
    apply_migrations(yoyo_dsn)
    yoyo_schema = schema_dump(yoyo_dsn)

    empty_schema = schema_dump(make_database())
    sqitch_dsn = make_database()
    name = psycopg.conninfo.conninfo_to_dict(sqitch_dsn)["dbname"]
    target = pg_server.sqitch_target(name)

    sqitch("deploy", "--verify", target)
    assert schema_dump(sqitch_dsn) == yoyo_schema
    sqitch("verify", target)

    sqitch("revert", "-y", target)
    assert schema_dump(sqitch_dsn) == empty_schema, "revert scripts leave objects behind"

    sqitch("deploy", "--verify", target)
    assert schema_dump(sqitch_dsn) == yoyo_schema


# -- (e) the command ------------------------------------------------------------------------


def history_search_command() -> list[str]:
    exe = Path(sys.executable).parent / "history-search"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "history_search"]


def test_cli_migrate_twice(make_database):
    dsn = make_database()
    first = subprocess.run([*history_search_command(), "migrate", "--dsn", dsn], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == [w for n in PLAN_IDS for w in ("applied", n)]
    schema = schema_dump(dsn)

    env = {**os.environ, "HISTORY_SEARCH_DSN": dsn}
    second = subprocess.run([*history_search_command(), "migrate"], capture_output=True, text=True, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "up to date"
    assert schema_dump(dsn) == schema


def test_cli_migrate_without_dsn_fails_clearly():
    env = {k: v for k, v in os.environ.items() if k != "HISTORY_SEARCH_DSN"}
    proc = subprocess.run([*history_search_command(), "migrate"], capture_output=True, text=True, env=env)
    assert proc.returncode == 2  # EXIT_ERROR (history_search.cli.EXIT_CODES)
    assert "--dsn" in proc.stderr


def test_cli_migrate_reports_an_unreachable_database_in_one_line(make_database):
    dsn = make_database()
    bad = dsn.rsplit("/", 1)[0] + "/no_such_database_here"
    proc = subprocess.run([*history_search_command(), "migrate", "--dsn", bad], capture_output=True, text=True)
    assert proc.returncode == 2  # EXIT_ERROR (history_search.cli.EXIT_CODES)
    assert "no_such_database_here" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_wheel_ships_the_sql(tmp_path, make_database):
    """A built wheel carries db/ and sqitch.plan, and migrates without the checkout."""
    # Build from a copy, so the checkout gets no build/ or egg-info left behind.
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "setup.py", "MANIFEST.in", "LICENSE", "README.md", "sqitch.plan", "sqitch.conf",
                 "pyclient", "db"):
        if (ROOT / item).is_dir():
            shutil.copytree(ROOT / item, src / item, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "_sql"))
        elif (ROOT / item).exists():
            shutil.copy2(ROOT / item, src / item)
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("history_search-*.whl")
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr

    dsn = make_database()
    code = (
        "import sys, history_search, history_search.migrations as m;"
        "print(history_search.__file__); print(m.sql_root());"
        "sys.exit(__import__('history_search.cli').cli.main(['migrate', '--dsn', sys.argv[1]]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "HISTORY_SEARCH_SQL_DIR"}
    env["PYTHONPATH"] = str(target)
    run = subprocess.run([sys.executable, "-c", code, dsn], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    module_file, root, *applied = run.stdout.splitlines()
    assert module_file.startswith(str(target))
    assert root == str(target / "history_search" / "_sql")
    assert (target / "history_search" / "_sql" / "db" / CITUS_DIR / "deploy" / "window_evidence_settings.sql").is_file()
    assert applied == [f"applied {n}" for n in PLAN_IDS]
