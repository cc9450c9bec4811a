-- Revert history-search:_search_reveal from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_search_reveal to pg
-- requires: search_reveals
-- requires: _query_analysis
-- The function lives in db/functions/_search_reveal.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _search_reveal: the hits of one search of a run, handed out once, and only
-- once the search's audit row, evidence and budget charge are committed and
-- flushed to the write-ahead log (docs/decisions.md, "Audit before reveal").
-- history.search_history calls it after its COMMIT; called any earlier (in
-- the search's own transaction, a savepoint of it, ...) it refuses, with no
-- hit. Whatever synchronous_commit the caller's commit ran with, it waits
-- until the WAL is flushed past that commit, so a crash after the reveal
-- cannot take the audit away. p_query is the searched text: the stored hits
-- hold their matched terms as positions in its term list.
CREATE OR REPLACE FUNCTION history._search_reveal(p_run uuid, p_search_event_id uuid, p_query text)
RETURNS history.search_result
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results and errors never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET client_min_messages = warning
SET standard_conforming_strings = on
-- A handful of rows by key: a parallel plan or JIT would only cost.
SET jit = off
SET max_parallel_workers_per_gather = 0
AS $function$
DECLARE
    v_stash  history.search_reveals;
    v_result history.search_result;
    v_terms  text[];
    v_target pg_lsn;
    v_deadline timestamptz;
    v_hit    history.search_hit;
BEGIN
    SELECT s.* INTO v_stash
      FROM history.search_reveals s
      JOIN history.runs r ON r.run_key = s.run_key AND r.tenant_key = s.tenant_key
     WHERE s.search_event_id = p_search_event_id AND r.run_token = p_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'search % has no hits waiting for this run', p_search_event_id
            USING ERRCODE = 'HS001', HINT = 'A search''s hits are revealed once, to the run that searched.';
    END IF;
    -- The row is visible, so its transaction is committed or is this one
    -- (or one this one is part of): state, not message text, decides.
    IF pg_xact_status(v_stash.written_by) IS DISTINCT FROM 'committed' THEN
        RAISE EXCEPTION 'the hits of search % are revealed only after its audit is committed', p_search_event_id
            USING ERRCODE = '42501',
                  HINT = 'CALL history.search_history(p_run, p_query, ..., result => NULL) outside a transaction block.';
    END IF;
    -- Durable: the search's commit record flushed. Its position is not
    -- observable, so: every WAL record inserted so far flushed (then it is),
    -- or three wal_writer_delay past this point, by which the WAL writer has
    -- flushed any asynchronous commit made before it (PostgreSQL's bound on
    -- an asynchronous commit's risk window). A commit with synchronous_commit
    -- on (what _search_history asks for) is flushed already; the wait is for
    -- a caller that turned it off, and ends early in the usual case where
    -- nothing else is left unflushed.
    v_target := pg_current_wal_insert_lsn();
    v_deadline := clock_timestamp() + 3 * current_setting('wal_writer_delay')::interval;
    WHILE pg_current_wal_flush_lsn() < v_target AND clock_timestamp() < v_deadline LOOP
        PERFORM pg_sleep(0.001);
    END LOOP;

    DELETE FROM history.search_reveals s
     WHERE s.search_event_id = v_stash.search_event_id AND s.tenant_key = v_stash.tenant_key;
    IF EXISTS (SELECT FROM unnest(v_stash.hits) h WHERE jsonb_array_length(h.reasons->'matched_terms') > 0) THEN
        SELECT a.terms INTO v_terms FROM history._query_analysis(p_query, v_stash.languages, v_stash.max_terms) a;
    END IF;
    -- Field by field: a field added to search_hit needs no change here.
    FOR i IN 1 .. coalesce(cardinality(v_stash.hits), 0) LOOP
        v_hit := v_stash.hits[i];
        v_hit.reasons := jsonb_set(v_hit.reasons, '{matched_terms}',
            coalesce((SELECT jsonb_agg(v_terms[t.position::int] ORDER BY t.o)
                        FROM jsonb_array_elements_text(v_hit.reasons->'matched_terms') WITH ORDINALITY t(position, o)),
                     '[]'));
        v_stash.hits[i] := v_hit;
    END LOOP;
    SELECT e.status, e.search_event_id, e.budget_used, e.budget_remaining, v_stash.hits
      INTO v_result
      FROM history.conversation_search_events e
     WHERE e.search_event_id = v_stash.search_event_id AND e.tenant_key = v_stash.tenant_key;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._search_reveal(uuid, uuid, text) IS
    'Internal: a search''s hits, once, after its audit is committed and flushed (called by CALL history.search_history)';
REVOKE ALL ON FUNCTION history._search_reveal(uuid, uuid, text) FROM PUBLIC;
-- The procedure runs as its caller, so its callers need EXECUTE here too.
GRANT EXECUTE ON FUNCTION history._search_reveal(uuid, uuid, text) TO history_searcher, history_runtime;

RESET ROLE;
COMMIT;
