"""Database fixtures for every test: the Python tests in tests/ and the pgTAP files in db/tests/.

Loaded for the whole tree by the root ``conftest.py`` (a conftest's fixtures only
reach the tests below its own folder, and the pgTAP files live under db/).

Where the database server comes from, in this order:

1. ``TEST_DATABASE_URL`` (a libpq URL of a role allowed to create databases and
   roles, on a server with pgTAP installed);
2. a testcontainers PostgreSQL container, when a Docker engine answers
   (pgTAP is apt-installed inside it; if that fails, we move on);
3. a :class:`history_search.cluster.ThrowawayCluster` started for the session.

Then one template database is migrated once per session (with
``apply_migrations``), and every test that asks for ``db_dsn``/``conn`` gets its
own ``CREATE DATABASE … TEMPLATE`` copy, dropped afterwards.

Fixtures
--------
``pg_server``      session: the :class:`PgServer` (``.dsn``, ``.url_for(db)``, ``.sqitch_target(db)``, ``.kind``)
``template_db``    session: name of the migrated template database
``db_dsn``         a fresh migrated database for this test (libpq URL, superuser)
``conn``           psycopg connection to ``db_dsn`` as superuser, autocommit on
``connect_as``     ``connect_as("history_runtime")`` → connection to ``db_dsn`` whose
                   session and current user are that role (``SET SESSION AUTHORIZATION``;
                   the client roles are NOLOGIN), autocommit on; closed after the test
``make_database``  factory: ``make_database()`` → URL of a new *empty* database,
                   ``make_database(template=name)`` → a copy; dropped after the test
``pgtap_connection`` overrides pytest-pgtap's: a connection to a dedicated migrated
                   database; if it cannot be made, every pgTAP file fails (never skips);
                   each file runs in a transaction that is always rolled back
"""

from __future__ import annotations

import itertools
import os
import secrets
import subprocess
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterator
from urllib.parse import quote, urlencode

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.string import TextLoader

from history_search.cluster import ThrowawayCluster, find_server_bindir, server_tool
from history_search.migrations import apply_migrations

# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


def _url(params: dict[str, str]) -> str:
    params = {k: str(v) for k, v in params.items() if v is not None}
    user = params.pop("user", None)
    password = params.pop("password", None)
    host = params.pop("host", None)
    port = params.pop("port", None)
    dbname = params.pop("dbname", "")
    netloc = ""
    if user:
        netloc = quote(user, safe="")
        if password:
            netloc += ":" + quote(password, safe="")
        netloc += "@"
    if host and not host.startswith("/"):
        netloc += f"[{host}]" if ":" in host else host
    elif host:
        params["host"] = host
    if port:
        netloc += f":{port}"
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql://{netloc}/{quote(dbname, safe='')}{query}"


@dataclass
class PgServer:
    """A PostgreSQL server the tests may create databases on."""

    kind: str  # "env" | "container" | "cluster"
    dsn: str  # admin connection (the maintenance database)
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1), repr=False)
    token: str = field(default_factory=lambda: secrets.token_hex(3))

    @property
    def params(self) -> dict[str, str]:
        return {k: str(v) for k, v in conninfo_to_dict(self.dsn).items()}

    def url_for(self, dbname: str) -> str:
        """libpq URL of ``dbname`` on this server, as the admin user."""
        return _url({**self.params, "dbname": dbname})

    def sqitch_target(self, dbname: str) -> str:
        """sqitch's ``db:pg:`` URI for ``dbname``."""
        return "db:" + _url({**self.params, "dbname": dbname}).replace("postgresql://", "pg://", 1)

    def new_name(self, prefix: str) -> str:
        return f"{prefix}_{self.token}_{next(self._names)}"

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.dsn, autocommit=True)

    def create_database(self, name: str, template: str | None = None) -> str:
        stmt = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template or "template0")
        )
        with self.admin() as c:
            c.execute(stmt)
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        with self.admin() as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _docker_answers() -> bool:
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        return False
    import gc

    with warnings.catch_warnings():
        # a refused connection leaves a socket for the garbage collector: not ours to report
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            import docker  # type: ignore[import-untyped]

            client = docker.from_env(timeout=3)
        except Exception:
            return False
        try:
            return bool(client.ping())
        except Exception:
            return False
        finally:
            client.close()
            del client
            gc.collect()


def _container_server() -> tuple[PgServer, Callable[[], None]] | None:
    """A PostgreSQL container with pgTAP apt-installed inside it, or None if that cannot be had."""
    try:
        try:
            from testcontainers.community.postgres import PostgresContainer
        except ImportError:  # testcontainers < 4.14
            from testcontainers.postgres import PostgresContainer
    except ImportError:
        return None
    try:
        major = find_server_bindir().parent.name
        major = major if major.isdigit() else "15"
    except Exception:
        major = "15"
    image = os.environ.get("HISTORY_SEARCH_PG_IMAGE", f"postgres:{major}")
    container = PostgresContainer(image, username="postgres", password="postgres", dbname="postgres", driver=None)
    try:
        container.start()
        code, output = container.exec(
            ["sh", "-c",
             "apt-get update -qq && apt-get install -y -qq postgresql-$PG_MAJOR-pgtap "
             "&& (apt-get install -y -qq postgresql-$PG_MAJOR-plpgsql-check || true)"]
        )
        if code != 0:
            raise RuntimeError(output.decode(errors="replace")[-2000:])
        url = _url({
            "user": "postgres", "password": "postgres", "host": container.get_container_host_ip(),
            "port": str(container.get_exposed_port(5432)), "dbname": "postgres",
        })
    except Exception as exc:
        warnings.warn(f"testcontainers PostgreSQL unusable ({exc}); using a local throwaway cluster")
        try:
            container.stop()
        except Exception:
            pass
        return None
    return PgServer("container", url), container.stop


def pytest_report_header(config) -> str:
    """Which server a throwaway cluster runs, so a CI log shows the major version tested."""
    if os.environ.get("TEST_DATABASE_URL"):
        return "history-search: server from TEST_DATABASE_URL"
    try:
        bindir = find_server_bindir()
        version = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
    except Exception as exc:  # the fixtures report it properly
        return f"history-search: no server found ({exc})"
    unless = "" if os.environ.get("HISTORY_SEARCH_PG_BINDIR") else " unless Docker answers"
    return f"history-search: throwaway cluster of {version} ({bindir}){unless}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    env_url = os.environ.get("TEST_DATABASE_URL")
    if env_url:
        yield PgServer("env", env_url)
        return
    # HISTORY_SEARCH_PG_BINDIR names the server to test (.ci/run's second major): a cluster of it.
    if not os.environ.get("HISTORY_SEARCH_PG_BINDIR") and _docker_answers():
        found = _container_server()
        if found is not None:
            server, stop = found
            try:
                yield server
            finally:
                stop()
            return
    with ThrowawayCluster() as cluster:
        yield PgServer("cluster", cluster.dsn)


# --------------------------------------------------------------------------
# Databases
# --------------------------------------------------------------------------


def _create_available_extensions(dsn: str) -> None:
    """pgTAP and plpgsql_check, each if the server has it (pgtap_connection insists on pgTAP)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for ext in ("pgtap", "plpgsql_check"):
            if c.execute("SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = %s", (ext,)).fetchone():
                c.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(ext)))


@pytest.fixture(scope="session")
def template_db(pg_server: PgServer) -> Iterator[str]:
    """A database with every migration applied (and pgTAP), copied for each test."""
    name = pg_server.new_name("hs_template")
    url = pg_server.create_database(name)
    try:
        apply_migrations(url)
        _create_available_extensions(url)
        yield name
    finally:
        pg_server.drop_database(name)


@pytest.fixture
def make_database(pg_server: PgServer) -> Iterator[Callable[..., str]]:
    created: list[str] = []

    def make(template: str | None = None, prefix: str = "hs_test") -> str:
        name = pg_server.new_name(prefix)
        url = pg_server.create_database(name, template)
        created.append(name)
        return url

    yield make
    for name in reversed(created):
        pg_server.drop_database(name)


@pytest.fixture
def db_dsn(make_database, template_db: str) -> str:
    """libpq URL (superuser) of a fresh database with every migration applied."""
    return make_database(template=template_db)


@pytest.fixture
def conn(db_dsn: str) -> Iterator[psycopg.Connection]:
    """psycopg connection as superuser to a fresh migrated database (autocommit)."""
    with psycopg.connect(db_dsn, autocommit=True) as c:
        yield c


@pytest.fixture
def connect_as(db_dsn: str) -> Iterator[Callable[..., psycopg.Connection]]:
    """``connect_as(role)``: a connection to this test's database acting as ``role``."""
    opened: list[psycopg.Connection] = []

    def connect(role: str, *, autocommit: bool = True, **kwargs) -> psycopg.Connection:
        c = psycopg.connect(db_dsn, autocommit=True, **kwargs)
        opened.append(c)
        c.execute(sql.SQL("SET SESSION AUTHORIZATION {}").format(sql.Identifier(role)))
        c.autocommit = autocommit
        return c

    yield connect
    for c in opened:
        c.close()


# --------------------------------------------------------------------------
# pgTAP (pytest-pgtap)
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pgtap_connection(pg_server: PgServer, template_db: str) -> Iterator[psycopg.Connection]:
    """The one connection pytest-pgtap runs every db/tests/test*.sql file on.

    It points at a dedicated copy of the migrated template, so the template stays
    free to be copied. Any failure here is an error of each pgTAP file, not a skip.
    """
    name = pg_server.new_name("hs_pgtap")
    url = pg_server.create_database(name, template_db)
    try:
        with psycopg.connect(url) as c:
            if not c.execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pgtap'").fetchone():
                raise RuntimeError(
                    f"pgTAP is not installed on the test server ({pg_server.kind}): "
                    "install postgresql-<major>-pgtap (scripts/bootstrap does)"
                )
            c.rollback()
            yield c
    finally:
        pg_server.drop_database(name)


@pytest.fixture(scope="session")
def _pgtap_runner(pgtap_connection: psycopg.Connection):
    """pytest-pgtap's runner, but every file's transaction is rolled back.

    pytest-pgtap runs each file inside a transaction that it commits; a file that
    forgets its own ``BEGIN; … ROLLBACK;`` would then leave its rows and pgTAP's
    plan state behind for the next file ("You tried to plan twice!").
    """
    from psycopg.rows import scalar_row
    from pytest_pgtap.pgtap import Runner

    class RollbackRunner(Runner):
        def run(self, query):
            with self.conn.transaction(force_rollback=True):
                cur = self.conn.cursor(row_factory=scalar_row)
                cur.execute(query)
                return self._collectrows(cur)

    return RollbackRunner(pgtap_connection)


# --------------------------------------------------------------------------
# Helpers for tests
# --------------------------------------------------------------------------


def pg_dump_supports(option: str) -> bool:
    out = subprocess.run([server_tool("pg_dump"), "--help"], capture_output=True, text=True).stdout
    return option in out


def schema_dump(dsn: str) -> str:
    """``pg_dump --schema-only`` of a database, without sqitch's and yoyo's bookkeeping."""
    cmd = [server_tool("pg_dump"), "--schema-only", "--no-owner", "--exclude-schema=sqitch",
           "-T", "public._yoyo_*", "-T", "public.yoyo_lock"]
    if pg_dump_supports("--restrict-key"):
        cmd.append("--restrict-key=cmp")
    proc = subprocess.run([*cmd, "--dbname", dsn], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"pg_dump failed: {proc.stderr}")
    return proc.stdout


# --------------------------------------------------------------------------
# Searching from raw SQL
# --------------------------------------------------------------------------

SEARCH_CALL = sql.SQL(
    "CALL {}(%(run)s::uuid, %(query)s::text, %(speaker)s::text, %(after)s::timestamptz,"
    " %(before)s::timestamptz, %(limit)s::integer, NULL)")


def call_search(conn: psycopg.Connection, run, query, speaker=None, after=None, before=None, limit=None, *,
                procedure: str = "history.search_history") -> dict:
    """``CALL`` the search procedure on ``conn`` (autocommit, as any client must) and return
    its result as ``to_jsonb`` gives it. Nulls take the procedure's defaults ('anyone', 8).

    The INOUT result arrives as the composite's text; casting it back is plain
    data conversion, which any role may do.
    """
    cur = conn.cursor()
    registered = conn.adapters.types.get("history.search_result")  # by the client, on this connection
    if registered is not None:
        cur.adapters.register_loader(registered.oid, TextLoader)
    text = cur.execute(SEARCH_CALL.format(sql.SQL(procedure)),
                       {"run": run, "query": query, "speaker": speaker, "after": after, "before": before,
                        "limit": limit}).fetchone()[0]
    return conn.execute("SELECT pg_catalog.to_jsonb(%s::history.search_result)", (text,)).fetchone()[0]


# --------------------------------------------------------------------------
# Two sessions racing
# --------------------------------------------------------------------------


def wait_until_blocked(observer, pid, what: str = "", timeout_s: float = 4.0):
    """Return once backend ``pid`` waits for a lock (seen through ``observer``); fail the test after ``timeout_s``."""
    for _ in range(int(timeout_s / 0.02)):
        state = observer.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if state and state[0] == "Lock":
            return
        time.sleep(0.02)
    pytest.fail(f"{what or f'backend {pid}'} never waited for a lock")


def run_in_thread(fn):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except Exception as exc:  # reported to the test below
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box
