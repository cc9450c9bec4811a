"""Audit before reveal (docs/decisions.md): no caller ever holds a hit whose audit is not committed.

Each way a hostile tool executor (a real ``history_searcher`` login sending its
own SQL) could try to read hits and then undo their audit is a test of its own.
Every attempt either gets no hit and leaves nothing behind, or leaves a
*committed* audit row (and evidence) listing every message it received. The
protocol-level ways (several statements in one query string, single-row mode,
``COPY``, a pipeline) go through ``psycopg.pq``, below psycopg's own
statement handling, as an attacker's client would.

How it holds (docs/decisions.md, "Audit before reveal"): ``history.search_history``
is a procedure that commits before it returns the hits, which PostgreSQL allows
only at the top level. The definer function behind it, ``history._search_history``,
runs only in a transaction a procedure began (``transaction_timestamp()`` later
than ``statement_timestamp()``) and returns no hit to a client role: it keeps
them for ``history._search_reveal``, which hands them out only once the search's
transaction has committed (and its commit is flushed). Nothing reads the
server's message text, so the guards hold in any ``lc_messages``.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors, pq

from tests.harness import call_search, run_in_thread, wait_until_blocked
from tests.test_adversarial_query import BODIES, ELIGIBLE, Session, World, world_database

QUERY = "launch budget review monday"
CALL = "CALL history.search_history('{run}'::uuid, '{query}')"
DIRECT = "SELECT history._search_history('{run}'::uuid, '{query}')"


@pytest.fixture(scope="module")
def world(pg_server, template_db):
    with world_database(pg_server, template_db, "hs_abr") as w:
        yield w


@pytest.fixture
def searcher(world):
    s = world.connect("history_searcher")
    yield s
    s.close()


def new_run(world: World) -> uuid.UUID:
    """A fresh run like the world's own (agent in team, requester alice), with a full budget."""
    return world.admin.execute(
        "SELECT history.begin_run('agent', 'team', 'alice', 't11', ARRAY['t10'])").fetchone()[0]


def committed_selections(world: World, run: uuid.UUID) -> set[str]:
    """Every message the run's committed audit rows say were returned (hits and neighbours)."""
    return set(world.admin.execute(
        """SELECT coalesce(array_agg(DISTINCT x), '{}')
             FROM history.conversation_search_events e
             JOIN history.runs r USING (run_key), unnest(e.selected_message_ids) x
            WHERE r.run_token = %s""", (run,)).fetchone()[0])


def received_ids(result: dict) -> set[str]:
    out = set()
    for h in result["hits"]:
        out.add(h["message_id"])
        out.update(n["message_id"] for n in h["before"] + h["after"])
    return out


def as_result(world: World, composite_text: str) -> dict:
    return world.admin.execute("SELECT to_jsonb(%s::history.search_result)", (composite_text,)).fetchone()[0]


def bodies_in(texts) -> set[str]:
    """The ids of the messages whose body appears in any of ``texts`` (notices, errors, copied rows)."""
    blob = "\n".join(texts)
    return {mid for mid, body in BODIES.items() if body in blob}


def assert_nothing_left(world: World, run: uuid.UUID, before: tuple, seen: set[str]) -> None:
    assert not seen, f"hits reached the caller: {sorted(seen)}"
    assert world.state(run) == before, "a refused search left a trace"


# --------------------------------------------------------------------------
# The procedure works where a client calls it, and nowhere a hit could be undone
# --------------------------------------------------------------------------


def test_autocommit_call_returns_hits_whose_audit_is_already_committed(world, searcher):
    run = new_run(world)
    result = call_search(searcher.conn, run, QUERY)
    got = received_ids(result)
    assert got and got <= ELIGIBLE
    # Visible to another session at once: committed before the hits came back.
    assert committed_selections(world, run) == got
    assert world.state(run)[0] == 1


@pytest.mark.parametrize("how", ["transaction_block", "savepoint"])
def test_no_search_inside_a_transaction_block(world, searcher, how):
    run = new_run(world)
    before = world.state(run)
    conn = searcher.conn
    conn.autocommit = False
    try:
        if how == "savepoint":
            conn.execute("SAVEPOINT hide")
        with pytest.raises(errors.InvalidTransactionTermination):
            conn.execute(CALL.format(run=run, query=QUERY))
        conn.rollback()
    finally:
        conn.autocommit = True
    assert_nothing_left(world, run, before, set())


def test_do_block_with_an_exception_handler_gets_no_hit(world, searcher):
    run = new_run(world)
    before = world.state(run)
    searcher.notices.clear()
    searcher.execute("""DO $$ DECLARE r history.search_result;
                        BEGIN
                            BEGIN
                                CALL history.search_history('%s'::uuid, '%s', result => r);
                                RAISE NOTICE 'exfiltrated %%', r;
                                RAISE EXCEPTION 'undo';
                            EXCEPTION WHEN others THEN RAISE NOTICE 'caught %%: %%', SQLSTATE, r;
                            END;
                        END $$""" % (run, QUERY))
    assert any("caught 2D000" in n for n in searcher.notices), searcher.notices
    assert not any("exfiltrated" in n for n in searcher.notices)
    assert_nothing_left(world, run, before, bodies_in(searcher.notices))


def test_do_block_that_fails_after_the_call_keeps_the_audit(world, searcher):
    """At the top level a DO block may CALL the procedure; its COMMIT happens before the hits
    are assigned, so the block's later failure cannot undo the audit."""
    run = new_run(world)
    searcher.notices.clear()
    with pytest.raises(errors.RaiseException):
        searcher.execute("""DO $$ DECLARE r history.search_result;
                            BEGIN
                                CALL history.search_history('%s'::uuid, '%s', result => r);
                                RAISE NOTICE 'exfiltrated %%', r;
                                RAISE EXCEPTION 'undo';
                            END $$""" % (run, QUERY))
    seen = bodies_in(searcher.notices)
    assert seen, "the block got no hits (the attempt proves nothing)"
    assert seen <= committed_selections(world, run)


def test_a_callers_own_procedure_cannot_undo_the_audit(world, searcher):
    run = new_run(world)
    searcher.execute("""CREATE PROCEDURE pg_temp.wrap(run uuid) LANGUAGE plpgsql AS $$
                        DECLARE r history.search_result;
                        BEGIN
                            CALL history.search_history(run, 'launch budget review monday', result => r);
                            RAISE NOTICE 'exfiltrated %', r;
                            ROLLBACK;
                            RAISE EXCEPTION 'undo';
                        END $$""")
    searcher.notices.clear()
    with pytest.raises(errors.RaiseException):
        searcher.execute("CALL pg_temp.wrap(%s)", (run,))
    seen = bodies_in(searcher.notices)
    assert seen and seen <= committed_selections(world, run)


def test_functions_cannot_call_the_procedure(world, searcher):
    run = new_run(world)
    before = world.state(run)
    searcher.execute("""CREATE FUNCTION pg_temp.grab(run uuid) RETURNS history.search_result LANGUAGE plpgsql AS $$
                        DECLARE r history.search_result;
                        BEGIN CALL history.search_history(run, 'launch budget review monday', result => r); RETURN r; END $$""")
    with pytest.raises(errors.InvalidTransactionTermination):
        searcher.execute("SELECT pg_temp.grab(%s)", (run,))
    assert_nothing_left(world, run, before, set())


# --------------------------------------------------------------------------
# The definer functions: the search runs only in a procedure's transaction,
# and its hits leave only once that transaction has committed
# --------------------------------------------------------------------------


@pytest.mark.parametrize("wrapper", [
    "direct",
    "plpgsql_function",
    "sql_function",  # inlined: no frame of its own
    "spoofed_procedure",  # a pg_temp procedure of the same name and arguments, without the COMMITs
])
def test_the_definer_function_refuses_every_caller_outside_a_procedures_transaction(world, searcher, wrapper):
    run = new_run(world)
    before = world.state(run)
    s = searcher
    if wrapper == "direct":
        attempt = DIRECT.format(run=run, query=QUERY)
    elif wrapper == "plpgsql_function":
        s.execute("""CREATE FUNCTION pg_temp.f(run uuid) RETURNS history.search_result LANGUAGE plpgsql AS $$
                     BEGIN RETURN history._search_history(run, 'launch budget review monday'); END $$""")
        attempt = f"SELECT pg_temp.f('{run}'::uuid)"
    elif wrapper == "sql_function":
        s.execute("""CREATE FUNCTION pg_temp.f(run uuid) RETURNS history.search_result LANGUAGE sql AS $$
                     SELECT history._search_history(run, 'launch budget review monday') $$""")
        attempt = f"SELECT pg_temp.f('{run}'::uuid)"
    else:
        s.execute("""CREATE PROCEDURE pg_temp.search_history(p_run uuid, p_query text, p_speaker text DEFAULT 'anyone',
                         p_after timestamptz DEFAULT NULL, p_before timestamptz DEFAULT NULL, p_limit integer DEFAULT 8,
                         INOUT result history.search_result DEFAULT NULL) LANGUAGE plpgsql AS $$
                     BEGIN
                         result := history._search_history(p_run, p_query, p_speaker, p_after, p_before, p_limit);
                     END $$""")
        attempt = f"CALL pg_temp.search_history('{run}'::uuid, '{QUERY}')"
    with pytest.raises(errors.InsufficientPrivilege) as exc:
        s.execute(attempt)
    assert "runs only in a transaction begun by CALL history.search_history" in str(exc.value)
    assert_nothing_left(world, run, before, set())


@pytest.fixture
def own_procedure(searcher):
    """A caller's own procedure that does what the real one does, with the reveal where it likes."""
    searcher.execute("""CREATE PROCEDURE pg_temp.own(p_run uuid, p_query text, p_commit boolean,
                            INOUT event uuid DEFAULT NULL, INOUT revealed jsonb DEFAULT NULL) LANGUAGE plpgsql AS $$
                        BEGIN
                            COMMIT;
                            event := (history._search_history(p_run, p_query)).search_event_id;
                            IF p_commit THEN COMMIT; END IF;
                            revealed := to_jsonb(history._search_reveal(p_run, event, p_query));
                        END $$""")
    searcher.execute("""CREATE PROCEDURE pg_temp.search_only(p_run uuid, p_query text, INOUT event uuid DEFAULT NULL)
                        LANGUAGE plpgsql AS $$
                        BEGIN
                            COMMIT;
                            event := (history._search_history(p_run, p_query)).search_event_id;
                        END $$""")
    return searcher


def test_hits_are_not_revealed_in_the_transaction_that_wrote_the_search(world, own_procedure):
    """The reveal decides by the search's transaction state (pg_xact_status), not by who calls."""
    run = new_run(world)
    before = world.state(run)
    with pytest.raises(errors.InsufficientPrivilege) as exc:
        own_procedure.execute("CALL pg_temp.own(%s, %s, false)", (run, QUERY))
    assert "revealed only after its audit is committed" in str(exc.value)
    assert_nothing_left(world, run, before, bodies_in([str(exc.value)]))
    # Committed first, the same procedure gets the hits, and they are in the committed audit.
    event, revealed = own_procedure.execute("CALL pg_temp.own(%s, %s, true)", (run, QUERY)).fetchone()
    assert received_ids(revealed) and received_ids(revealed) <= committed_selections(world, run)


def test_a_reveal_is_once_and_for_the_run_that_searched(world, own_procedure):
    run, other = new_run(world), new_run(world)
    (event,) = own_procedure.execute("CALL pg_temp.search_only(%s, %s)", (run, QUERY)).fetchone()
    for wrong in (other, run):  # another run's token; then the right one, twice
        if wrong == run:
            revealed = as_result(world, own_procedure.execute("SELECT history._search_reveal(%s, %s, %s)",
                                                              (run, event, QUERY)).fetchone()[0])
            assert received_ids(revealed) and received_ids(revealed) <= committed_selections(world, run)
            terms = set().union(*(h["reasons"]["matched_terms"] for h in revealed["hits"]))
            assert terms and terms <= {"launch", "budget", "review", "monday"}
        with pytest.raises(psycopg.Error) as exc:
            own_procedure.execute("SELECT history._search_reveal(%s, %s, %s)", (wrong, event, QUERY))
        assert exc.value.sqlstate == "HS001"


def test_hits_an_end_run_dropped_are_hs002_not_an_unknown_search(world, own_procedure):
    """end_run between a search's commit and its reveal drops the hits; the reveal says the run ended."""
    run = new_run(world)
    (event,) = own_procedure.execute("CALL pg_temp.search_only(%s, %s)", (run, QUERY)).fetchone()
    world.admin.execute("SELECT history.end_run(%s)", (run,))
    with pytest.raises(psycopg.Error) as exc:
        own_procedure.execute("SELECT history._search_reveal(%s, %s, %s)", (run, event, QUERY))
    assert exc.value.sqlstate == "HS002" and "has ended" in str(exc.value) and str(run) not in str(exc.value)
    assert "dropped" in exc.value.diag.message_detail


@pytest.mark.parametrize("first", ["end_run", "another reveal"])
def test_a_reveal_that_loses_its_hits_while_it_waits_reveals_nothing(world, own_procedure, first):
    """The reveal's delete is its claim: whoever deleted the hits first (an end_run, another reveal
    of the same search), the reveal that waited for it returns no hit."""
    run = new_run(world)
    (event,) = own_procedure.execute("CALL pg_temp.search_only(%s, %s)", (run, QUERY)).fetchone()
    with psycopg.connect(world.url) as holder:
        holder.execute("SELECT 1 FROM history.search_reveals WHERE search_event_id = %s FOR UPDATE", (event,))
        thread, box = run_in_thread(lambda: own_procedure.execute(
            "SELECT history._search_reveal(%s, %s, %s)", (run, event, QUERY)).fetchone())
        wait_until_blocked(world.admin, own_procedure.conn.info.backend_pid, "the reveal")
        if first == "end_run":
            holder.execute("SELECT history.end_run(%s)", (run,))
        else:
            holder.execute("DELETE FROM history.search_reveals WHERE search_event_id = %s", (event,))
        holder.commit()
        thread.join(30)
    assert not thread.is_alive()
    assert "value" not in box, "the reveal handed out hits that were no longer its to reveal"
    exc = box["error"]
    assert (exc.sqlstate, "has ended" in str(exc)) == (("HS002", True) if first == "end_run" else ("HS001", False))


def test_the_bare_procedure_name_works_while_no_other_routine_has_it(world, searcher):
    """With schema history on the caller's search_path the real procedure's frame prints
    unqualified; that form is trusted only while no other routine has the name."""
    run = new_run(world)
    searcher.execute("SET search_path = history, pg_catalog")
    result = call_search(searcher.conn, run, QUERY, procedure="search_history")
    assert received_ids(result) and received_ids(result) <= committed_selections(world, run)


# --------------------------------------------------------------------------
# Below psycopg: the protocol-level ways
# --------------------------------------------------------------------------


def raw(world: World) -> pq.PGconn:
    """A libpq connection of a searcher login, driven directly."""
    pgconn = pq.PGconn.connect(world.login("history_searcher").encode())
    assert pgconn.status == pq.ConnStatus.OK, pgconn.error_message
    return pgconn


def results_of(pgconn: pq.PGconn) -> list[pq.PGresult]:
    out = []
    while (res := pgconn.get_result()) is not None:
        out.append(res)
    return out


def texts_of(results) -> list[str]:
    """Every value and error message the client received."""
    out = []
    for res in results:
        out.append(res.error_message.decode(errors="replace"))
        for row in range(res.ntuples):
            for col in range(res.nfields):
                v = res.get_value(row, col)
                if v is not None:
                    out.append(v.decode())
    return out


def test_several_statements_in_one_query_string(world):
    run = new_run(world)
    before = world.state(run)
    pgconn = raw(world)
    try:
        res = pgconn.exec_((CALL.format(run=run, query=QUERY) + "; SELECT 1/0").encode())
        assert res.status == pq.ExecStatus.FATAL_ERROR
        assert res.error_field(pq.DiagnosticField.SQLSTATE) == b"2D000"
        assert_nothing_left(world, run, before, bodies_in(texts_of([res])))
        # The definer function in such a string is refused the same way.
        res = pgconn.exec_((DIRECT.format(run=run, query=QUERY) + "; SELECT 1/0").encode())
        assert res.error_field(pq.DiagnosticField.SQLSTATE) == b"42501"
        assert_nothing_left(world, run, before, bodies_in(texts_of([res])))
    finally:
        pgconn.finish()


def test_single_row_mode_with_a_later_row_failing(world):
    run = new_run(world)
    before = world.state(run)
    pgconn = raw(world)
    try:
        pgconn.send_query(
            (f"SELECT x.r, 1 / (2 - g) FROM generate_series(1, 2) g, "
             f"LATERAL (SELECT history._search_history('{run}'::uuid, '{QUERY}') AS r) x").encode())
        pgconn.set_single_row_mode()
        got = results_of(pgconn)
        assert got[-1].error_field(pq.DiagnosticField.SQLSTATE) == b"42501"
        assert not any(r.status == pq.ExecStatus.SINGLE_TUPLE for r in got)
        assert_nothing_left(world, run, before, bodies_in(texts_of(got)))
    finally:
        pgconn.finish()


def test_copy_out_with_a_later_row_failing(world):
    run = new_run(world)
    before = world.state(run)
    pgconn = raw(world)
    try:
        res = pgconn.exec_(
            (f"COPY (SELECT history._search_history('{run}'::uuid, '{QUERY}'), 1 / (2 - g) "
             f"FROM generate_series(1, 2) g) TO STDOUT").encode())
        copied = []
        if res.status == pq.ExecStatus.COPY_OUT:
            while True:
                n, data = pgconn.get_copy_data(0)
                if n < 0:
                    break
                copied.append(bytes(data).decode())
            res = pgconn.get_result()
        assert res.error_field(pq.DiagnosticField.SQLSTATE) == b"42501"
        assert not copied
        assert_nothing_left(world, run, before, bodies_in(texts_of([res]) + copied))
    finally:
        pgconn.finish()


def test_pipeline_with_a_failing_statement_after_the_call(world):
    """One sync for both: the CALL's COMMIT makes its audit durable before its row is sent,
    whatever the failing statement after it does to the rest of the pipeline."""
    run = new_run(world)
    pgconn = raw(world)
    try:
        pgconn.enter_pipeline_mode()
        pgconn.send_query_params(CALL.format(run=run, query=QUERY).encode(), None)
        pgconn.send_query_params(b"SELECT 1/0", None)
        pgconn.pipeline_sync()
        got = []
        while True:
            res = pgconn.get_result()
            if res is None:
                continue
            got.append(res)
            if res.status == pq.ExecStatus.PIPELINE_SYNC:
                break
        pgconn.exit_pipeline_mode()
        rows = [r for r in got if r.status == pq.ExecStatus.TUPLES_OK]
        assert any(r.status == pq.ExecStatus.FATAL_ERROR for r in got)
        assert rows, "the CALL returned nothing (the attempt proves nothing)"
        result = as_result(world, rows[0].get_value(0, 0).decode())
        assert received_ids(result) and received_ids(result) <= committed_selections(world, run)
    finally:
        pgconn.finish()


def test_cursor_over_the_definer_function(world, searcher):
    run = new_run(world)
    before = world.state(run)
    conn = searcher.conn
    conn.autocommit = False
    try:
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(f"DECLARE c CURSOR FOR {DIRECT.format(run=run, query=QUERY)}")
            conn.execute("FETCH ALL FROM c")
        conn.rollback()
    finally:
        conn.autocommit = True
    assert_nothing_left(world, run, before, set())


# --------------------------------------------------------------------------
# Repeated attempts: the budget holds, everything received is audited
# --------------------------------------------------------------------------


def test_repeated_evasion_never_reads_past_the_audit(world, searcher):
    """Every way above, over and over on one run: all the caller ever received is in the run's
    committed audit, and never more than 400 distinct messages."""
    run = new_run(world)
    received: set[str] = set()
    queries = ["launch", "budget", "review", "monday", "plan", "notes", QUERY]
    pgconn = raw(world)
    try:
        for i in range(30):
            q = queries[i % len(queries)]
            received |= received_ids(call_search(searcher.conn, run, q))
            res = pgconn.exec_((CALL.format(run=run, query=q) + "; SELECT 1/0").encode())
            received |= bodies_in(texts_of([res]))
            res = pgconn.exec_(DIRECT.format(run=run, query=q).encode())
            received |= bodies_in(texts_of([res]))
            searcher.notices.clear()
            searcher.execute("""DO $$ DECLARE r history.search_result;
                                BEGIN BEGIN CALL history.search_history('%s'::uuid, '%s', result => r);
                                            RAISE NOTICE '%%', r;
                                      EXCEPTION WHEN others THEN NULL; END; END $$""" % (run, q))
            received |= bodies_in(searcher.notices)
    finally:
        pgconn.finish()
    audited = committed_selections(world, run)
    assert received and received <= audited <= ELIGIBLE
    used = world.admin.execute("SELECT evidence_count FROM history.runs WHERE run_token = %s", (run,)).fetchone()[0]
    assert used == len(audited) <= 400


def test_a_run_never_receives_more_than_400_messages(db_dsn):
    """The issue's attack at scale: 150 searches of a 600-message group, each tried through
    the ways that used to undo the audit. The run's committed evidence holds everything the
    caller received, and it stops at exactly the 400-message budget."""
    password = uuid.uuid4().hex
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE hs_abr_searcher LOGIN PASSWORD '{password}' IN ROLE history_searcher")
        for account, kind in [("agent", "agent"), ("alice", "person")]:
            admin.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
        admin.execute("SELECT history.upsert_conversation('big', 'group')")
        for account in ("agent", "alice"):
            admin.execute("SELECT history.add_member('big', %s, '2026-01-01')", (account,))
        with admin.cursor() as cur:
            cur.executemany("SELECT history.post_message(%s, 'big', 'alice', %s, %s::timestamptz)",
                            [(f"m{i:03d}", f"topic{i % 150} note {i}", f"2026-02-01T00:{i // 60:02d}:{i % 60:02d}Z")
                             for i in range(600)])
        admin.execute("SELECT history.post_message('now', 'big', 'alice', 'hello', '2026-03-01')")
        run = admin.execute("SELECT history.begin_run('agent', 'big', 'alice', 'now')").fetchone()[0]
    dsn = psycopg.conninfo.make_conninfo(db_dsn, user="hs_abr_searcher", password=password)
    received: set[str] = set()
    bodies = {f"m{i:03d}": f"topic{i % 150} note {i}" for i in range(600)}
    with psycopg.connect(dsn, autocommit=True) as conn:
        pgconn = pq.PGconn.connect(dsn.encode())
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        try:
            for i in range(150):
                q = f"topic{i}"
                way = i % 3
                if way == 0:
                    r = call_search(conn, run, q, limit=20)
                    received |= received_ids(r)
                elif way == 1:
                    res = pgconn.exec_((CALL.format(run=run, query=q) + "; SELECT 1/0").encode())
                    blob = "\n".join(texts_of([res]))
                    received |= {m for m, b in bodies.items() if b in blob}
                else:
                    notices.clear()
                    with pytest.raises(errors.RaiseException):
                        conn.execute("""DO $$ DECLARE r history.search_result;
                                        BEGIN CALL history.search_history('%s'::uuid, '%s', p_limit => 20, result => r);
                                              RAISE NOTICE '%%', r; RAISE EXCEPTION 'undo'; END $$""" % (run, q))
                    blob = "\n".join(notices)
                    received |= {m for m, b in bodies.items() if b in blob}
        finally:
            pgconn.finish()
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        audited = set(admin.execute(
            """SELECT coalesce(array_agg(DISTINCT x), '{}') FROM history.conversation_search_events e
                 JOIN history.runs r USING (run_key), unnest(e.selected_message_ids) x
                WHERE r.run_token = %s""", (run,)).fetchone()[0])
        used = admin.execute("SELECT evidence_count FROM history.runs WHERE run_token = %s", (run,)).fetchone()[0]
        admin.execute("DROP OWNED BY hs_abr_searcher")
        admin.execute("DROP ROLE hs_abr_searcher")
    assert received and received <= audited
    assert used == len(audited) == 400
