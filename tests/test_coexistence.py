"""Migrations on a database that already has extensions of its own (pgcrypto first).

yoyo (``apply_migrations`` and its rollback) and sqitch (deploy, verify, revert)
must deploy next to an existing pgcrypto, in ``public`` or in another schema,
with a search_path that puts that schema first; never drop, move or alter an
extension they did not create; and leave no third-party function in ``history``.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from history_search.migrations import apply_migrations, plan_migrations, yoyo_url

from .test_migrations import sqitch


# Contrib extensions a production database commonly has, next to pgcrypto (which
# the first version of the migrations installed, and so collided with). (uuid-ossp is left out: PyPI's PostgreSQL 17 build lacks
# the libossp-uuid it loads, and gen_random_uuid() has replaced it.)
COMMON = ("pg_trgm", "btree_gin", "citext", "hstore")


def extension_state(dsn: str) -> list[tuple]:
    """Each extension with its schema and version, and every member function with its privileges."""
    with psycopg.connect(dsn, autocommit=True) as c:
        extensions = c.execute(
            """SELECT e.extname, e.extnamespace::regnamespace::text, e.extversion
                 FROM pg_catalog.pg_extension e ORDER BY 1""").fetchall()
        members = c.execute(
            """SELECT e.extname, p.oid::regprocedure::text, coalesce(p.proacl::text, 'default'), p.proowner::regrole::text
                 FROM pg_catalog.pg_depend d
                 JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
                 JOIN pg_catalog.pg_proc p ON d.classid = 'pg_catalog.pg_proc'::regclass AND p.oid = d.objid
                WHERE d.deptype = 'e' AND d.refclassid = 'pg_catalog.pg_extension'::regclass
                ORDER BY 1, 2""").fetchall()
    return extensions + members


def with_extensions(dsn: str, crypto_schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        if crypto_schema != "public":
            c.execute(f'CREATE SCHEMA "{crypto_schema}"')
            # Unqualified names resolve to that schema first, as a DBA might set it.
            dbname = conninfo_to_dict(dsn)["dbname"]
            c.execute(f'ALTER DATABASE "{dbname}" SET search_path = "{crypto_schema}", public')
        c.execute(f'CREATE EXTENSION pgcrypto WITH SCHEMA "{crypto_schema}"')
        for ext in COMMON:
            c.execute(f'CREATE EXTENSION "{ext}" WITH SCHEMA public')


def history_functions_from_extensions(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return [r[0] for r in c.execute(
            """SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
                WHERE p.pronamespace = 'history'::regnamespace
                  AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                               WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
                                 AND d.deptype = 'e')""")]


def digest_works(dsn: str) -> bool:
    """The audit digest machinery: a fresh key's HMAC equals the user's own pgcrypto's."""
    with psycopg.connect(dsn, autocommit=True) as c:
        schema = c.execute("SELECT extnamespace::regnamespace::text FROM pg_catalog.pg_extension "
                           "WHERE extname = 'pgcrypto'").fetchone()[0]
        return c.execute(
            f"""SELECT history._hmac_sha256(convert_to('launch monday', 'UTF8'), k.secret)
                       = {schema}.hmac(convert_to('launch monday', 'UTF8'), k.secret, 'sha256')
                  FROM history.query_digest_keys k ORDER BY k.digest_key_id DESC LIMIT 1""").fetchone()[0]


@pytest.mark.parametrize("crypto_schema", ["public", "crypto"])
def test_yoyo_migrates_and_rolls_back_next_to_an_existing_pgcrypto(make_database, crypto_schema):
    dsn = make_database()
    with_extensions(dsn, crypto_schema)
    before = extension_state(dsn)
    assert any(row[0] == "pgcrypto" and row[1] == crypto_schema for row in before)

    assert apply_migrations(dsn)
    assert extension_state(dsn) == before, "migrate created, moved or altered an extension"
    assert history_functions_from_extensions(dsn) == []
    assert digest_works(dsn)

    # yoyo's rollback runs every revert script, newest first.
    from yoyo import get_backend

    backend = get_backend(yoyo_url(dsn))
    try:
        with backend.lock():
            backend.rollback_migrations(backend.to_rollback(plan_migrations()))
    finally:
        backend.connection.close()
    assert extension_state(dsn) == before, "rollback dropped or altered an extension it did not create"
    with psycopg.connect(dsn, autocommit=True) as c:
        assert c.execute("SELECT to_regnamespace('history')").fetchone()[0] is None


@pytest.mark.parametrize("crypto_schema", ["public", "crypto"])
def test_sqitch_deploys_verifies_and_reverts_next_to_an_existing_pgcrypto(pg_server, make_database, crypto_schema):
    dsn = make_database()
    with_extensions(dsn, crypto_schema)
    before = extension_state(dsn)
    target = pg_server.sqitch_target(conninfo_to_dict(dsn)["dbname"])

    sqitch("deploy", "--verify", target)
    sqitch("verify", target)
    assert extension_state(dsn) == before
    assert history_functions_from_extensions(dsn) == []
    assert digest_works(dsn)

    sqitch("revert", "-y", target)
    assert extension_state(dsn) == before, "sqitch revert dropped or altered an extension it did not create"
    with psycopg.connect(dsn, autocommit=True) as c:
        assert c.execute("SELECT to_regnamespace('history')").fetchone()[0] is None
