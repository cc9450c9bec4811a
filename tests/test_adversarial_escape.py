"""A history_searcher login trying to escape; runtime and auditor where relevant.

Every attempt is a test that asserts it failed: shadow objects in ``pg_temp``
(and ``public``, which PostgreSQL 15 does not let client roles write) never
run inside the definer functions and change nothing; ``search_path`` and other
session settings change nothing; every internal helper and every function or
relation of schema ``history`` not granted to a role, enumerated from the
catalog, is refused; forged, foreign and ended run tokens get ``HS002`` (or
``HS001``) and leave no trace; the auditor can read no message text; no role
but the owner can read the digest key.

The world and the search checks come from tests/test_adversarial_query.py.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from datetime import datetime, timezone

import psycopg
import pytest
from psycopg import errors, sql

from history_search.client import Search
from history_search.errors import InvalidArgument

from tests.harness import call_search
from tests.test_adversarial_query import (
    BODIES, CONVERSATIONS, ELIGIBLE, MESSAGES, Session, World, error_text, world_database,
)

CLIENT_ROLES = ["history_searcher", "history_runtime", "history_auditor", "history_digest_verifier"]


@pytest.fixture(scope="module")
def world(pg_server, template_db):
    with world_database(pg_server, template_db, "hs_adve") as w:
        yield w


@pytest.fixture
def session(world):
    """``session(role)``: a fresh login connection (fresh plan and PL/pgSQL caches), closed after the test."""
    opened: list[Session] = []

    def open_(role: str = "history_searcher", **kwargs) -> Session:
        s = world.connect(role, **kwargs)
        opened.append(s)
        return s

    yield open_
    for s in opened:
        s.close()


QUERY = "launch budget review monday zqxsecretmarker"
MARK = "zqxsecretmarker"


def run_search(s: Session, run, query: str = QUERY, fn: str = "history.search_history"):
    """Hits of one search as comparable tuples (id, conversation, sent_at, speaker, role, body, before, after)."""
    row = call_search(s.conn, run, query, procedure=fn)
    hits = []
    for h in row["hits"]:
        hits.append((h["message_id"], h["conversation_id"],
                     datetime.fromisoformat(h["sent_at"]).astimezone(timezone.utc), h["speaker_id"],
                     h["speaker_role"], h["body"],
                     tuple(n["message_id"] for n in h["before"]), tuple(n["message_id"] for n in h["after"])))
    row["scores"] = [h["score"] for h in row["hits"]]
    return row, hits


def returned_ids(hits) -> set[str]:
    out = set()
    for h in hits:
        out.add(h[0])
        out.update(h[6])
        out.update(h[7])
    return out


@pytest.fixture(scope="module")
def baseline(world):
    """The hits of QUERY for the module's run, from a clean session (and their scores)."""
    s = world.connect("history_searcher")
    try:
        row, hits = run_search(s, world.run)
    finally:
        s.close()
    assert len(hits) >= 3 and returned_ids(hits) <= ELIGIBLE
    return hits, row["scores"]


def assert_same_search(world: World, s: Session, baseline, fn: str = "history.search_history"):
    before = world.state()
    s.notices.clear()
    row, hits = run_search(s, world.run, fn=fn)
    expected_hits, expected_scores = baseline
    assert hits == expected_hits
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(row["scores"], expected_scores))
    assert world.state()[0] == before[0] + 1
    assert not any(MARK in n for n in s.notices), s.notices
    assert MARK not in world.audit_dump(row["search_event_id"])
    assert world.admin.execute("SELECT history.verify_query_digest(%s, %s)",
                               (row["search_event_id"], QUERY)).fetchone()[0]


# --------------------------------------------------------------------------
# public and pg_temp
# --------------------------------------------------------------------------


@pytest.mark.parametrize("role", CLIENT_ROLES)
def test_client_roles_cannot_create_in_public_or_a_schema(world, session, role):
    s = session(role)
    login = s.execute("SELECT current_user").fetchone()[0]
    assert not s.execute("SELECT has_schema_privilege(current_user, 'public', 'CREATE')").fetchone()[0]
    assert not s.execute("SELECT has_schema_privilege(current_user, 'history', 'CREATE')").fetchone()[0]
    assert not s.execute("SELECT has_database_privilege(current_user, current_database(), 'CREATE')").fetchone()[0]
    for ddl in ["CREATE TABLE public.messages (body text)",
                "CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE sql AS $$ SELECT 'pwned' $$",
                "CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = pg_catalog.texteq)",
                "CREATE VIEW public.v AS SELECT 1",
                "CREATE TABLE history.shadow (x int)",
                "CREATE FUNCTION history.lower(text) RETURNS text LANGUAGE sql AS $$ SELECT 'pwned' $$",
                f"CREATE SCHEMA {login}_own",
                "ALTER SCHEMA public OWNER TO CURRENT_USER",
                "SET ROLE history_owner",
                "SET SESSION AUTHORIZATION history_owner",
                "SET session_replication_role = replica",
                "GRANT history_owner TO CURRENT_USER"]:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            s.execute(ddl)
    assert s.execute("SELECT current_user, session_user").fetchone() == (login, login)


# Shadows of what the definer functions call, in pg_temp. Each one records
# that it ran (and warns) before doing the real thing.
SHADOW_FUNCTIONS = [
    ("lower", "text", "text", "pg_catalog.lower($1)"),
    ("upper", "text", "text", "pg_catalog.upper($1)"),
    ("btrim", "text", "text", "pg_catalog.btrim($1)"),
    ("left", "text, integer", "text", "pg_catalog.left($1, $2)"),
    ("replace", "text, text, text", "text", "pg_catalog.replace($1, $2, $3)"),
    ("regexp_replace", "text, text, text, text", "text", "pg_catalog.regexp_replace($1, $2, $3, $4)"),
    ("normalize", "text, text", "text", "pg_catalog.normalize($1)"),
    ("quote_literal", "text", "text", "pg_catalog.quote_literal($1)"),
    ("convert_to", "text, name", "bytea", "pg_catalog.convert_to($1, $2)"),
    ("getdatabaseencoding", "", "name", "pg_catalog.getdatabaseencoding()"),
    ("to_tsvector", "regconfig, text", "tsvector", "pg_catalog.to_tsvector($1, $2)"),
    ("to_tsvector", "text", "tsvector", "pg_catalog.to_tsvector($1)"),
    ("to_tsquery", "regconfig, text", "tsquery", "pg_catalog.to_tsquery($1, $2)"),
    ("tsvector_to_array", "tsvector", "text[]", "pg_catalog.tsvector_to_array($1)"),
    ("ts_rank", "tsvector, tsquery, integer", "real", "pg_catalog.ts_rank($1, $2, $3)"),
    ("ts_delete", "tsvector, text[]", "tsvector", "pg_catalog.ts_delete($1, $2)"),
    ("length", "tsvector", "integer", "pg_catalog.length($1)"),
    ("array_to_string", "anyarray, text", "text", "pg_catalog.array_to_string($1, $2)"),
    ("cardinality", "anyarray", "integer", "pg_catalog.cardinality($1)"),
    ("array_fill", "anyelement, integer[]", "anyarray", "pg_catalog.array_fill($1, $2)"),
    ("power", "double precision, double precision", "double precision", "pg_catalog.power($1, $2)"),
    ("now", "", "timestamptz", "pg_catalog.now()"),
    ("gen_random_uuid", "", "uuid", "pg_catalog.gen_random_uuid()"),
    ("sha256", "bytea", "bytea", "NULL::bytea"),
    ("get_byte", "bytea, integer", "integer", "0"),
    ("set_byte", "bytea, integer, integer", "bytea", "NULL::bytea"),
    ("_hmac_sha256", "bytea, bytea", "bytea", "NULL::bytea"),
    ("tstzrange", "timestamptz, timestamptz, text", "tstzrange", "pg_catalog.tstzrange($1, $2, $3)"),
    ("upper_inf", "anyrange", "boolean", "pg_catalog.upper_inf($1)"),
    ("jsonb_array_length", "jsonb", "integer", "pg_catalog.jsonb_array_length($1)"),
    ("to_jsonb", "anyelement", "jsonb", "pg_catalog.to_jsonb($1)"),
    ("format", "text, text", "text", "pg_catalog.format($1, $2)"),
    ("encode", "bytea, text", "text", "pg_catalog.encode($1, $2)"),
    ("_normalise_query", "text", "text", "'pwned'"),
    ("_lineage_passes", "integer, bigint, bigint[]", "boolean", "true"),
    ("_outside_windows", "bigint, timestamptz, bigint[], tstzmultirange[]", "boolean", "false"),
    ("_lock_open_run", "uuid", "record", "NULL::record"),
]
SHADOW_OPERATORS = [("=", "text", "text", "texteq"), ("=", "bigint", "bigint", "int8eq"),
                    ("<>", "bigint", "bigint", "int8ne"), ("@@", "tsvector", "tsquery", "ts_match_vq"),
                    ("||", "text", "text", "textcat"), ("<", "timestamptz", "timestamptz", "timestamptz_lt"),
                    (">=", "timestamptz", "timestamptz", "timestamptz_ge"), ("<@", "timestamptz", "tstzrange",
                                                                             "elem_contained_by_range")]
# Temp tables named like the schema's tables (and the function's CTEs), holding rows that would
# change any result that read them.
SHADOW_TABLES = ["accounts", "conversations", "memberships", "messages", "message_events", "message_lineage",
                 "message_sources", "message_search_documents", "identity_proofs", "conversation_authors",
                 "search_settings", "runs", "run_evidence", "run_trace", "conversation_search_events",
                 "query_digest_keys", "agent_windows", "audience_windows", "matches", "classified", "scored", "top"]


def plant_shadows(s: Session, schema: str = "pg_temp") -> None:
    s.execute(f"CREATE TABLE IF NOT EXISTS {schema}.fired (what text)")
    s.execute(f"GRANT ALL ON {schema}.fired TO PUBLIC")
    for i, (name, args, returns, body) in enumerate(SHADOW_FUNCTIONS):
        params = ", ".join(f"a{j} {t.strip()}" for j, t in enumerate(args.split(","))) if args else ""
        real = re.sub(r"\$(\d)", lambda m: f"a{int(m.group(1)) - 1}", body)
        s.execute(f"""CREATE FUNCTION {schema}.{name}({params}) RETURNS {returns} LANGUAGE plpgsql AS $f$
                      BEGIN
                          INSERT INTO {schema}.fired VALUES ('{name}');
                          RAISE WARNING 'shadow {name} fired';
                          RETURN {real};
                      END $f$""")
        s.execute(f"GRANT EXECUTE ON FUNCTION {schema}.{name}({args}) TO PUBLIC")
    for op, left, right, proc in SHADOW_OPERATORS:
        fn = f"shadow_op_{abs(hash((op, left, right))) % 10**8}"
        s.execute(f"""CREATE FUNCTION {schema}.{fn}(a {left}, b {right}) RETURNS boolean LANGUAGE plpgsql AS $f$
                      BEGIN
                          INSERT INTO {schema}.fired VALUES ('operator {op}');
                          RAISE WARNING 'shadow operator fired';
                          RETURN pg_catalog.{proc}(a, b);
                      END $f$""") if op != "||" else s.execute(
            f"""CREATE FUNCTION {schema}.{fn}(a {left}, b {right}) RETURNS text LANGUAGE plpgsql AS $f$
                BEGIN
                    INSERT INTO {schema}.fired VALUES ('operator ||');
                    RETURN 'pwned';
                END $f$""")
        s.execute(f"CREATE OPERATOR {schema}.{op} (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = {schema}.{fn})")
    for table in SHADOW_TABLES:
        s.execute(f"CREATE TABLE {schema}.{table} (message_id text, body text, secret bytea, text_search_config "
                  f"regconfig, max_query_chars int, max_query_terms int)")
        s.execute(f"INSERT INTO {schema}.{table} VALUES ('pwned', 'PWNED BODY', 'x', 'simple', 1, 1)")


def test_pg_temp_shadows_never_run_inside_search(world, session, baseline):
    s = session()
    plant_shadows(s)
    # The shadows are live: called by name they run (and log).
    assert s.execute("SELECT pg_temp.lower('X')").fetchone()[0] == "x"
    assert s.execute("SELECT 'a'::text OPERATOR(pg_temp.=) 'a'::text").fetchone()[0] is True
    assert s.execute("SELECT count(*) FROM pg_temp.fired").fetchone()[0] == 2
    s.execute("TRUNCATE pg_temp.fired")
    for path in [None, "pg_temp", "pg_temp, history, public", "pg_temp, pg_catalog, history", "history, pg_temp"]:
        if path:
            s.execute(f"SET search_path = {path}")
        assert_same_search(world, s, baseline)
        # Searching through the temp schema's own name for the function still runs the real one.
        if path and "history" in path:
            assert_same_search(world, s, baseline, fn="search_history")
        assert s.execute("SELECT count(*) FROM pg_temp.fired").fetchone()[0] == 0
        assert not any("shadow" in n for n in s.notices), s.notices


def test_public_shadows_never_run_inside_search(world, session, baseline):
    """Even if a DBA left public writable and something planted shadows there, the pinned
    search_path (pg_catalog, history, pg_temp) never reaches them."""
    s = session()
    owner = world.admin
    owner.execute("CREATE TABLE IF NOT EXISTS public.fired (what text)")
    try:
        owner.execute("GRANT ALL ON public.fired TO PUBLIC")
        plant = Session(owner)
        plant_shadows(plant, schema="public")
        owner.execute("TRUNCATE public.fired")
        # The shadows are live for a caller that puts public first.
        s.execute("SET search_path = public, pg_catalog")
        assert s.execute("SELECT 'a'::text = 'a'::text").fetchone()[0] is True
        assert s.execute("SELECT count(*) FROM public.fired").fetchone()[0] == 1
        owner.execute("TRUNCATE public.fired")
        for path in ["public, pg_catalog", "public", "public, pg_temp, pg_catalog, history", '"$user", public']:
            s.execute(f"SET search_path = {path}")
            assert_same_search(world, s, baseline)
            assert s.execute("SELECT count(*) FROM public.fired").fetchone()[0] == 0
            assert not any("shadow" in n for n in s.notices), s.notices
        # The runtime's functions are pinned too: ingesting through the shadows changes nothing.
        rt = session("history_runtime")
        rt.execute("SET search_path = public, pg_catalog")
        rt.execute("SELECT history.upsert_account('shadow-probe', 'person')")
        assert s.execute("SELECT count(*) FROM public.fired").fetchone()[0] == 0
    finally:
        owner.execute("DROP SCHEMA public CASCADE")
        owner.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
        owner.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")


SETTINGS = [
    "search_path = ''",
    "search_path = pg_temp",
    "search_path = public, pg_catalog",
    "plpgsql.variable_conflict = use_variable",
    "plpgsql.variable_conflict = use_column",
    "plpgsql.extra_errors = 'all'",
    "plpgsql.extra_warnings = 'all'",
    "plpgsql.print_strict_params = on",
    "transform_null_equals = on",
    "array_nulls = off",
    "bytea_output = 'escape'",
    "DateStyle = 'SQL, DMY'",
    "DateStyle = 'German'",
    "DateStyle = 'Postgres, MDY'",
    "IntervalStyle = 'sql_standard'",
    "IntervalStyle = 'iso_8601'",
    "TimeZone = 'Pacific/Kiritimati'",
    "TimeZone = 'America/St_Johns'",
    "TimeZone = 'UTC+12'",
    "default_text_search_config = 'pg_catalog.simple'",
    "default_transaction_isolation = 'serializable'",
    "enable_indexscan = off",
    "enable_bitmapscan = off",
    "enable_seqscan = off",
    "enable_hashjoin = off",
    "work_mem = '64kB'",
    "client_min_messages = 'debug5'",
    "backslash_quote = on",
    "escape_string_warning = off",
]


# Settings only a superuser may change: refused outright.
SUPERUSER_ONLY = {"plpgsql.variable_conflict"}


@pytest.mark.parametrize("setting", SETTINGS)
def test_session_settings_change_nothing(world, session, baseline, setting):
    s = session()
    s.execute("DO $$ BEGIN END $$")  # load PL/pgSQL, so its settings are checked when set
    if setting.split(" =")[0] in SUPERUSER_ONLY:
        with pytest.raises(errors.InsufficientPrivilege):
            s.execute(f"SET {setting}")
    else:
        s.execute(f"SET {setting}")
    assert_same_search(world, s, baseline)
    if "debug5" not in setting:
        assert s.notices == [], s.notices


# Regression: search_history's body has backslash literals; before it pinned
# standard_conforming_strings = on, this setting made the call fail with 42601.
def test_standard_conforming_strings_off_changes_nothing(world, session, baseline):
    s = session()
    s.execute("SET standard_conforming_strings = off")
    assert_same_search(world, s, baseline)


def test_digest_normal_form_ignores_standard_conforming_strings(world, session):
    """Regression: _normalise_query wrote its white-space pattern as '\\s+'; under a caller's
    standard_conforming_strings = off that literal is 's+', so verify_query_digest folded every
    run of 's' to a space: false negatives ('launch sss') and false positives ('launchs' verified an
    event of 'launch')."""
    sessions = {}
    for q in ["launch sss", "launch", "boss  says\tyes"]:
        row, _ = run_search(session(), world.run, q)
        sessions[q] = row["search_event_id"]
    auditor = session("history_digest_verifier")
    auditor.execute("SET standard_conforming_strings = off")
    auditor.execute("SET escape_string_warning = off")

    def verify(event, q):
        return auditor.execute("SELECT history.verify_query_digest(%s, %s)", (event, q)).fetchone()[0]

    assert verify(sessions["launch sss"], "launch sss")
    assert verify(sessions["launch sss"], "  LAUNCH   sss ")
    assert not verify(sessions["launch"], "launchs")
    assert not verify(sessions["launch"], "launch sss")
    assert verify(sessions["boss  says\tyes"], "boss says yes")
    assert not verify(sessions["boss  says\tyes"], "bo ay ye")


# --------------------------------------------------------------------------
# Functions and relations of schema history, from the catalog
# --------------------------------------------------------------------------

# search_history is the committing procedure; it runs as its caller, so its
# callers hold EXECUTE on the definer function behind it too (which refuses any
# other caller: tests/test_audit_before_reveal.py).
GRANTED = {
    "history_searcher": {"search_history", "_search_history", "_search_reveal", "run_status"},
    "history_runtime": {"upsert_account", "upsert_conversation", "add_member", "remove_member", "post_message",
                        "edit_message", "delete_message", "link_identity", "revoke_proof", "begin_run", "end_run",
                        "check_delivery", "record_reply", "search_history", "_search_history", "_search_reveal",
                        "run_status", "erase_account"},
    # history.status shows the release; a function a view calls is checked against its reader (on Citus the
    # views read the _*_rows functions: docs/scale-out.md, "The auditor's views on Citus")
    "history_auditor": {"schema_release", "_search_audit_rows", "_search_audit_messages_rows", "_status_rows"},
    "history_digest_verifier": {"verify_query_digest"},
}
READABLE = {"history_searcher": set(), "history_runtime": set(),
            "history_auditor": {"search_audit", "search_audit_messages", "status"}, "history_digest_verifier": set()}


def schema_functions(world: World):
    return world.admin.execute(
        """SELECT p.proname, p.prokind, p.oid::regprocedure::text,
                  ARRAY(SELECT pg_catalog.format_type(t, NULL) FROM unnest(p.proargtypes) t)
             FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'history'::regnamespace ORDER BY 3""").fetchall()


@pytest.mark.parametrize("role", CLIENT_ROLES)
def test_every_function_not_granted_is_refused(world, session, role):
    s = session(role)
    s.execute("SET search_path = pg_temp, public, history")  # so an unqualified call would find them too
    functions = schema_functions(world)
    helpers = [f for f in functions if f[0].startswith("_")]
    assert len(helpers) >= 17 and len(functions) > 30
    refused = []
    for name, kind, signature, types in functions:
        # Sub-selects, not NULL constants: the planner folds a STRICT function of constant NULLs away
        # without ever calling it (or checking EXECUTE).
        # (CALL takes no sub-select; it checks EXECUTE before it looks at the arguments.)
        args = ", ".join(f"NULL::{t}" if kind == "p" else f"(SELECT NULL::{t})" for t in types)
        call = f"CALL history.{name}({args})" if kind == "p" else f"SELECT history.{name}({args})"
        if name in GRANTED[role]:
            assert s.execute("SELECT has_function_privilege(%s::regprocedure, 'EXECUTE')", (signature,)).fetchone()[0]
            continue
        with pytest.raises(errors.InsufficientPrivilege):
            s.execute(call)
        refused.append(name)
        if name.startswith("_"):  # unqualified, through the caller's own search_path: refused the same way
            with pytest.raises(errors.InsufficientPrivilege):
                s.execute(f"SELECT {name}({args})")
    assert {f[0] for f in helpers} - GRANTED[role] <= set(refused)
    assert "_hmac_sha256" in refused


@pytest.mark.parametrize("role", CLIENT_ROLES)
def test_every_relation_is_refused_but_the_granted(world, session, role):
    s = session(role)
    relations = world.admin.execute(
        """SELECT c.relname, c.relkind FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
            ORDER BY 1""").fetchall()
    assert {"messages", "message_events", "query_digest_keys", "runs"} <= {r[0] for r in relations}
    assert any(k == "S" for _, k in relations)
    for name, kind in relations:
        rel = sql.Identifier("history", name)
        if name in READABLE[role]:
            s.execute(sql.SQL("SELECT * FROM {} LIMIT 1").format(rel))
        else:
            for stmt in ["SELECT * FROM {} LIMIT 1", "SELECT count(*) FROM {}", "COPY {} TO STDOUT",
                         "TABLE {}"]:
                with pytest.raises(errors.InsufficientPrivilege):
                    s.execute(sql.SQL(stmt).format(rel))
            if kind != "S":
                with pytest.raises(errors.InsufficientPrivilege):
                    with s.conn.transaction():
                        s.execute(sql.SQL("LOCK TABLE {} IN ACCESS SHARE MODE").format(rel))
        if kind == "S":
            for stmt in ["SELECT nextval({})", "SELECT currval({})", "SELECT setval({}, 1)"]:
                with pytest.raises(errors.InsufficientPrivilege):
                    s.execute(sql.SQL(stmt).format(sql.Literal(f"history.{name}")))
            continue
        if kind not in ("r", "p"):
            continue  # the views are not updatable at all
        column = s.execute(
            "SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "AND NOT attisdropped AND attidentity = '' AND attgenerated = '' ORDER BY attnum LIMIT 1",
            (f"history.{name}",)).fetchone()[0]
        writes = ["INSERT INTO {} DEFAULT VALUES", "DELETE FROM {}", "TRUNCATE {}",
                  f"UPDATE {{}} SET {column} = {column}"]
        for stmt in writes:
            with pytest.raises(errors.InsufficientPrivilege):
                s.execute(sql.SQL(stmt).format(rel))


def test_statistics_show_no_history_values(world, session):
    """pg_stats would show most common values (message bodies, digest keys) to a role that may read the column."""
    world.admin.execute("ANALYZE")
    assert world.admin.execute(
        "SELECT count(*) FROM pg_stats WHERE schemaname = 'history' AND tablename = 'message_events'").fetchone()[0]
    for role in CLIENT_ROLES:
        s = session(role)
        assert s.execute("SELECT count(*) FROM pg_stats WHERE schemaname = 'history'").fetchone()[0] == 0, role
        assert s.execute("SELECT count(*) FROM pg_stats_ext WHERE schemaname = 'history'").fetchone()[0] == 0, role
        with pytest.raises(errors.InsufficientPrivilege):
            s.execute("SELECT * FROM pg_statistic LIMIT 1")


def test_other_sessions_statements_are_hidden(world, session):
    """A searcher cannot read the runtime's statements (message bodies) from pg_stat_activity."""
    rt = session("history_runtime", autocommit=False)
    rt.execute("SELECT history.upsert_account('zqxactivitymarker', 'person')")  # left open: idle in transaction
    try:
        for role in ["history_searcher", "history_auditor"]:
            s = session(role)
            rows = s.execute("SELECT coalesce(query, '') FROM pg_stat_activity WHERE pid <> pg_backend_pid()").fetchall()
            assert rows and not any("zqxactivitymarker" in r[0] for r in rows), role
    finally:
        rt.conn.rollback()


# --------------------------------------------------------------------------
# Run tokens
# --------------------------------------------------------------------------


def global_counts(world: World):
    return world.admin.execute(
        """SELECT (SELECT count(*) FROM history.conversation_search_events), (SELECT count(*) FROM history.run_trace),
                  (SELECT count(*) FROM history.run_evidence), (SELECT sum(search_count) FROM history.runs)""").fetchone()


def assert_refused(world: World, s: Session, token, sqlstate: str):
    before = global_counts(world)
    with pytest.raises(psycopg.Error) as exc:
        s.execute("CALL history.search_history(%s::uuid, %s)", (token, QUERY))
    assert exc.value.diag.sqlstate == sqlstate, exc.value
    assert MARK not in error_text(exc.value)
    assert global_counts(world) == before, "a refused search left a trace"
    return exc.value


def test_forged_tokens_are_hs002(world, session):
    s = session()
    event = world.admin.execute("SELECT search_event_id FROM history.conversation_search_events LIMIT 1").fetchone()
    forged = [uuid.uuid4(), uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID(int=world.run.int ^ 1),
              uuid.UUID(str(world.run)[:-1] + ("0" if str(world.run)[-1] != "0" else "1"))]
    if event:
        forged.append(event[0])  # a real uuid of another table
    for token in forged:
        exc = assert_refused(world, s, token, "HS002")
        # the message names the offending run by its label, never by the token (a credential)
        assert hashlib.sha256(str(token).encode()).hexdigest()[:12] in exc.diag.message_primary
        assert str(token) not in str(exc)
    assert_refused(world, s, None, "HS001")


def test_malformed_tokens_never_reach_the_function(world, session):
    """Not a uuid: the client refuses it (HS001) before sending; in raw SQL the uuid type's input
    refuses it (22P02) before search_history is called. Nothing is written either way."""
    s = session()
    before = global_counts(world)
    for bad in ["not-a-uuid", "", "' OR true --", str(world.run) + "0", str(world.run)[:-1]]:
        with pytest.raises(InvalidArgument) as exc:
            Search(s.conn, bad)
        assert exc.value.sqlstate == "HS001"
        with pytest.raises(errors.InvalidTextRepresentation):
            s.execute("CALL history.search_history(%s::uuid, 'launch')", (bad,))
    assert global_counts(world) == before


def test_token_spellings_of_the_same_run_are_the_same_token(world, session, baseline):
    """uuid input accepts other spellings of the same 128 bits: same run, same result."""
    s = session()
    for spelling in [str(world.run).upper(), "{" + str(world.run) + "}", world.run.hex]:
        row = call_search(s.conn, spelling, QUERY)
        assert {h["message_id"] for h in row["hits"]} == {h[0] for h in baseline[0]}


def test_ended_run_is_refused(world, session):
    run = world.admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11')").fetchone()[0]
    s = session()
    run_search(s, run)
    world.admin.execute("SELECT history.end_run(%s)", (run,))
    exc = assert_refused(world, s, run, "HS002")
    assert "ended" in exc.diag.message_primary
    # The runtime cannot reopen it either: ending again is HS002.
    rt = session("history_runtime")
    with pytest.raises(psycopg.Error) as again:
        rt.execute("SELECT history.end_run(%s)", (run,))
    assert again.value.diag.sqlstate == "HS002"
    assert_refused(world, s, run, "HS002")


def test_run_ended_by_its_reply_is_refused(world, session):
    # In 'secret' (agent and carol): the reply stays outside what the module's run may see.
    run = world.admin.execute("SELECT history.begin_run('agent', 'secret', 'carol', 's01')").fetchone()[0]
    s = session()
    run_search(s, run)
    rt = session("history_runtime")
    rt.execute("SELECT history.record_reply(%s, 'reply-one', 'noted', '2026-03-02T12:00:00Z')", (run,))
    assert_refused(world, s, run, "HS002")


def test_a_token_is_a_bearer_capability_for_its_own_run_only(world, session):
    """The runtime creates the run and the model holds only its token. Whoever presents
    a token searches as that run — its agent, audience and context — and as nothing else; the
    token is the only input and cannot be combined with another run's rights."""
    world.admin.execute("SELECT history.post_message('e02', 'elsewhere', 'bob', 'elsewhere launch followup', "
                        "'2026-02-23T12:00:00Z')")
    other = world.admin.execute(
        "SELECT history.begin_run('agent2', 'elsewhere', 'alice', 'e01')").fetchone()[0]
    s = session()
    row, hits = run_search(s, other, "launch budget review monday")
    ids = returned_ids(hits)
    # agent2 sees only 'elsewhere' (e01 is its current message): nothing of the first agent's world.
    assert ids == {"e02"}, ids
    agent = world.admin.execute(
        """SELECT a.account_id FROM history.conversation_search_events e JOIN history.accounts a
                ON a.account_key = e.agent_key WHERE e.search_event_id = %s""", (row["search_event_id"],)).fetchone()[0]
    assert agent == "agent2"
    tokens = [world.admin.execute("SELECT history.begin_run('agent', 'team', 'alice', 't11')").fetchone()[0]
              for _ in range(20)]
    assert len(set(tokens)) == 20 and all(t.version == 4 for t in tokens)


# --------------------------------------------------------------------------
# Audit evasion through the caller's transaction
# --------------------------------------------------------------------------

def test_read_only_transaction_cannot_search_unaudited(world, session):
    """A search that cannot write its audit row returns nothing."""
    s = session()
    s.execute("SET default_transaction_read_only = on")
    before = global_counts(world)
    with pytest.raises(errors.ReadOnlySqlTransaction):
        run_search(s, world.run)
    assert global_counts(world) == before


# --------------------------------------------------------------------------
# The auditor and the digest key
# --------------------------------------------------------------------------

# Every text-like column an auditor may read, by design: ids, enums and the hex digest.
AUDITOR_TEXT_COLUMNS = {
    "search_audit": {"tenant_id", "agent_id", "destination_conversation_id", "requester_id", "query_digest", "speaker",
                     "hit_message_ids", "selected_message_ids", "status", "run_token_sha256"},
    "search_audit_messages": {"tenant_id", "agent_id", "message_id", "conversation_id", "role", "hit_message_id",
                              "run_token_sha256"},
    "status": {"release"},
}
# jsonb an auditor may read, by design: counts of searches per hour.
AUDITOR_JSON_COLUMNS = {("status", "searches_by_hour")}


def test_auditor_can_select_no_text_column(world, session):
    s = session("history_auditor")
    cols = s.execute(
        """SELECT c.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                  t.typcategory, a.atttypid::regtype::text
             FROM pg_catalog.pg_attribute a
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
            WHERE c.relnamespace = 'history'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
              AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT')""").fetchall()
    assert {c[0] for c in cols} == {"search_audit", "search_audit_messages", "status"}
    forbidden = re.compile(r"body|document(?!s_estimate)|secret|title|display|matched|terms|query(?!_digest|_term_count)|detail|(^|_)text$")
    for rel, col, typ, category, base in cols:
        assert not forbidden.search(col), (rel, col)
        assert base not in ("tsvector", "tsquery", "bytea", "json", "jsonb") or (rel, col) in AUDITOR_JSON_COLUMNS, (
            rel, col, typ)
        if category == "S" or typ.endswith("[]") and base.startswith("text"):
            assert col in AUDITOR_TEXT_COLUMNS[rel], f"unexpected text column {rel}.{col}"


def test_auditor_output_holds_no_message_text(world, session):
    """Search a lot, then dump everything the auditor can read: no message body appears."""
    s = session()
    for q in ["launch", "budget review", "café 日本語", "straße İstanbul", "o'reilly reilly", "checklist approved",
              "state-of-the-art quoted", QUERY]:
        run_search(s, world.run, q)
    ids = {m[0] for m in MESSAGES} | {c[0] for c in CONVERSATIONS} | {"agent", "agent2", "alice", "bob", "carol"}
    words = {w for body in BODIES.values() for w in re.findall(r"\w{4,}", body) if w.lower() not in ids}
    auditor = session("history_auditor")
    readable = auditor.execute(
        """SELECT c.oid::regclass::text FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND pg_catalog.has_table_privilege(c.oid, 'SELECT')""").fetchall()
    assert {r[0] for r in readable} == {"history.search_audit", "history.search_audit_messages", "history.status"}
    dump = ""
    for (rel,) in readable:
        part = auditor.execute(sql.SQL("SELECT coalesce(string_agg(t::text, ' '), '') FROM {} t").format(
            sql.SQL(rel))).fetchone()[0]
        assert part, f"{rel} is empty: the check would prove nothing"
        dump += part
    assert "t03" in dump  # message ids are there, as designed
    # history.status's own vocabulary (its jsonb keys) is not message text, though a body may share a word
    words -= {"budget", "exhausted", "searches"}
    found = sorted(w for w in words if w in dump)
    assert not found, f"message text in the auditor's output: {found}"
    assert MARK not in dump and "zqx" not in dump
    # The run tokens (live bearer capabilities) are not there either: a run shows by key and token digest.
    assert str(world.run) not in dump
    # What verify_query_digest gives its own role is a boolean, never text.
    event = auditor.execute("SELECT search_event_id FROM history.search_audit LIMIT 1").fetchone()[0]
    assert session("history_digest_verifier").execute("SELECT pg_typeof(history.verify_query_digest(%s, 'x'))::text",
                                                      (event,)).fetchone()[0] == "boolean"


def test_only_the_owner_can_read_the_digest_key(world, session):
    readers = world.admin.execute(
        """SELECT r.rolname FROM pg_catalog.pg_roles r
            WHERE NOT r.rolsuper
              AND (pg_catalog.has_table_privilege(r.oid, 'history.query_digest_keys', 'SELECT')
                   OR pg_catalog.has_any_column_privilege(r.oid, 'history.query_digest_keys', 'SELECT'))
            ORDER BY 1""").fetchall()
    # pg_read_all_data is PostgreSQL's predefined read-everything role; nothing here is a member of it.
    assert {r[0] for r in readers} == {"history_owner", "pg_read_all_data"}
    for role in CLIENT_ROLES:
        for powerful in ["history_owner", "pg_read_all_data", "pg_write_all_data", "pg_read_server_files",
                         "pg_execute_server_program"]:
            assert not world.admin.execute("SELECT pg_has_role(%s, %s, 'MEMBER')", (role, powerful)).fetchone()[0]
        s = session(role)
        for stmt in ["SELECT secret FROM history.query_digest_keys", "SELECT digest_key_id FROM history.query_digest_keys",
                     "COPY history.query_digest_keys (secret) TO STDOUT"]:
            with pytest.raises(errors.InsufficientPrivilege):
                s.execute(stmt)
        with pytest.raises(errors.InsufficientPrivilege):
            s.execute("SELECT history._hmac_sha256('launch'::bytea, 'k'::bytea)")
    # The runtime cannot compute or check a digest either.
    rt = session("history_runtime")
    with pytest.raises(errors.InsufficientPrivilege):
        rt.execute("SELECT history.verify_query_digest(gen_random_uuid(), 'launch')")
