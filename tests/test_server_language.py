"""Nothing depends on the server's message language.

The database speaks German (``ALTER DATABASE … SET lc_messages = 'de_DE.UTF-8'``,
a locale ``scripts/bootstrap`` generates): PostgreSQL then translates its
messages, error contexts and ``PG_CONTEXT`` included. A search through the
procedure must work as in English and return the same hits, and the rules that
keep hits from a caller until their audit is committed must hold the same way.
"""

from __future__ import annotations

import subprocess
import uuid

import psycopg
import pytest
from psycopg import errors, sql

from tests.harness import call_search
from tests.test_adversarial_query import ELIGIBLE, world_database

QUERY = "launch budget review monday"
GERMAN = "de_DE.UTF-8"


def _has_german_locale() -> bool:
    out = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=True).stdout
    return any(line.lower().replace("-", "") == "de_de.utf8" for line in out.split())


@pytest.fixture(scope="module")
def world(pg_server, template_db):
    # A missing locale is a failure, not a skip: scripts/bootstrap generates it.
    assert _has_german_locale(), "no de_DE.UTF-8 locale: run scripts/bootstrap (it runs locale-gen)"
    with world_database(pg_server, template_db, "hs_lang") as w:
        name = w.admin.execute("SELECT current_database()").fetchone()[0]
        w.admin.execute(sql.SQL("ALTER DATABASE {} SET lc_messages = {}").format(
            sql.Identifier(name), sql.Literal(GERMAN)))
        yield w


def new_run(world) -> uuid.UUID:
    return world.admin.execute(
        "SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]


def ids(result: dict) -> list[str]:
    return [h["message_id"] for h in result["hits"]]


@pytest.fixture
def german_searcher(world):
    s = world.connect("history_searcher")
    # The session really speaks German: the test proves nothing otherwise.
    assert s.execute("SHOW lc_messages").fetchone()[0] == GERMAN
    with pytest.raises(errors.DivisionByZero) as exc:
        s.execute("SELECT 1 / 0")
    assert "Division durch Null" in str(exc.value)
    yield s
    s.close()


def test_a_search_on_a_german_server_returns_what_an_english_one_does(world, german_searcher):
    run = new_run(world)
    result = call_search(german_searcher.conn, run, QUERY)
    assert ids(result) and set(ids(result)) <= ELIGIBLE
    # The same search in an English session of the same database, on a run like it.
    # (lc_messages is superuser-only: the English session is the admin's.)
    english_run = new_run(world)
    with psycopg.connect(world.url, autocommit=True) as admin:
        admin.execute("SET lc_messages = 'C'")
        expected = call_search(admin, english_run, QUERY)
    assert ids(result) == ids(expected)
    # Every ranking component but recency (the clock moved between the two searches).
    assert ([{k: v for k, v in h["reasons"].items() if k not in ("recency", "total")} for h in result["hits"]]
            == [{k: v for k, v in h["reasons"].items() if k not in ("recency", "total")} for h in expected["hits"]])
    # Revealed only with its audit committed (visible to another session).
    committed = world.admin.execute(
        """SELECT hit_message_ids FROM history.conversation_search_events
            WHERE search_event_id = %s""", (result["search_event_id"],)).fetchone()[0]
    assert committed == ids(result)


def test_errors_keep_their_codes_in_german(world, german_searcher):
    run = new_run(world)
    with pytest.raises(psycopg.Error) as exc:
        call_search(german_searcher.conn, run, QUERY, limit=0)
    assert exc.value.sqlstate == "HS001"
    # In a transaction block the procedure still refuses before any search.
    german_searcher.conn.autocommit = False
    try:
        with pytest.raises(errors.InvalidTransactionTermination):
            call_search(german_searcher.conn, run, QUERY)
        german_searcher.conn.rollback()
    finally:
        german_searcher.conn.autocommit = True


def test_the_guards_hold_on_a_german_server(world, german_searcher):
    run = new_run(world)
    with pytest.raises(errors.InsufficientPrivilege):
        german_searcher.execute("SELECT history._search_history(%s, %s)", (run, QUERY))
    german_searcher.execute("""CREATE PROCEDURE pg_temp.own(p_run uuid, p_query text, INOUT revealed jsonb DEFAULT NULL)
                               LANGUAGE plpgsql AS $$
                               DECLARE event uuid;
                               BEGIN
                                   COMMIT;
                                   event := (history._search_history(p_run, p_query)).search_event_id;
                                   revealed := to_jsonb(history._search_reveal(p_run, event, p_query));
                               END $$""")
    with pytest.raises(errors.InsufficientPrivilege):
        german_searcher.execute("CALL pg_temp.own(%s, %s)", (run, QUERY))
