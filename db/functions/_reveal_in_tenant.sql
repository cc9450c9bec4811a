-- _reveal_in_tenant: the hits of one search of a run in its tenant
-- p_tenant, behind history._search_reveal: handed out once, and only once
-- the search's audit row, evidence and budget charge are committed and
-- flushed to the write-ahead log (docs/decisions.md, "Audit before reveal").
-- Called any earlier (in the search's own transaction, a savepoint of it,
-- ...) it refuses, with no hit. p_query is the searched text: the stored hits
-- hold their matched terms as positions in its term list. p_tenant NULL: the
-- run's tenant is looked up here.
--
-- Durable means the WAL is flushed past a position known to be at or after
-- the search's commit record. When the search committed synchronously (as
-- search_history's does) and nothing was inserted since, it already is. WAL
-- that others inserted in between (another session, autovacuum, a read that
-- pruned a page) nobody may flush soon: then, with p_defer, the reveal notes
-- the position in the search's row, writes WAL of its own (a logical-decoding
-- message) so that the caller's synchronous commit flushes past it, and
-- returns NULL: commit and call again (search_history does). Without p_defer
-- it waits for the flush, at most three wal_writer_delay (PostgreSQL's bound
-- for an asynchronous commit: the WAL writer has flushed it by then).
--
-- On Citus `history-search distribute` delegates it by p_tenant, like
-- history._search_in_tenant: it runs on the worker that wrote the search,
-- whose transaction status and WAL are the ones to check. Executable by the
-- owner alone (history._search_reveal calls it).
CREATE OR REPLACE FUNCTION history._reveal_in_tenant(p_tenant integer, p_run uuid, p_search_event_id uuid, p_query text,
                                                     p_defer boolean DEFAULT false)
RETURNS history.search_result
LANGUAGE plpgsql
SECURITY INVOKER  -- the owner alone may call it: its callers are definers
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
    -- Before this transaction reads anything: a read may prune a page and so
    -- insert WAL of its own, which nobody flushes soon (not a commit). A
    -- search committed in this snapshot, taken first, has its commit record
    -- end at or before this position.
    v_snapshot pg_snapshot := pg_catalog.pg_current_snapshot();
    v_target pg_lsn := pg_catalog.pg_current_wal_insert_lsn();
    v_stash  history.search_reveals;
    v_result history.search_result;
    v_terms  text[];
    v_deadline timestamptz;
    v_hit    history.search_hit;
    v_tenant integer;
BEGIN
    -- The search's warm-up call (no run): compiled, nothing read.
    IF p_run IS NULL AND p_search_event_id IS NULL THEN
        RETURN NULL;
    END IF;
    -- The run's tenant: each statement below names it (on Citus, one shard).
    v_tenant := p_tenant;
    IF v_tenant IS NULL THEN
        SELECT t.tenant_key INTO v_tenant FROM history.run_tokens t WHERE t.run_token = p_run;
    END IF;
    SELECT s.* INTO v_stash
      FROM history.search_reveals s
      JOIN history.runs r ON r.run_key = s.run_key AND r.tenant_key = v_tenant
     WHERE s.search_event_id = p_search_event_id AND r.run_token = p_run AND s.tenant_key = v_tenant;
    -- The row found: committed and flushed before its hits leave, then claimed.
    IF FOUND THEN
        -- The row is visible, so its transaction is committed or is this one
        -- (or one this one is part of): state, not message text, decides.
        IF pg_xact_status(v_stash.written_by) IS DISTINCT FROM 'committed' THEN
            RAISE EXCEPTION 'the hits of search % are revealed only after its audit is committed', p_search_event_id
                USING ERRCODE = '42501',
                      HINT = 'CALL history.search_history(p_run, p_query, ..., result => NULL) outside a transaction block.';
        END IF;
        -- Committed after the snapshot above (the caller had the search's id
        -- before its commit): its commit record is before the WAL's end now.
        IF NOT pg_catalog.pg_visible_in_snapshot(v_stash.written_by, v_snapshot) THEN
            v_target := pg_catalog.pg_current_wal_insert_lsn();
        END IF;
        -- A deferred reveal of this search noted a target and its caller
        -- committed since: flushed past that, the search's commit is on disk.
        IF v_stash.flush_target IS NOT NULL THEN
            v_target := least(v_target, v_stash.flush_target);
        END IF;
        IF pg_catalog.pg_current_wal_flush_lsn() < v_target THEN
            IF p_defer THEN
                UPDATE history.search_reveals s SET flush_target = v_target
                 WHERE s.search_event_id = v_stash.search_event_id AND s.tenant_key = v_stash.tenant_key;
                -- search_reveals is unlogged: a commit that wrote no WAL
                -- flushes nothing. A transactional logical-decoding message is
                -- WAL that locks no row (a write to the run row deadlocked
                -- with end_run, which locks it before this one's row).
                PERFORM pg_catalog.pg_logical_emit_message(true, 'history-search', 'reveal deferred');
                RETURN NULL;
            END IF;
            v_deadline := pg_catalog.clock_timestamp() + 3 * pg_catalog.current_setting('wal_writer_delay')::interval;
            WHILE pg_catalog.pg_current_wal_flush_lsn() < v_target AND pg_catalog.clock_timestamp() < v_deadline LOOP
                PERFORM pg_catalog.pg_sleep(0.001);
            END LOOP;
        END IF;

        -- The delete is the claim: a reveal of the same search, or an end_run,
        -- that deleted the row first (this one waited for it) leaves none.
        DELETE FROM history.search_reveals s
         WHERE s.search_event_id = v_stash.search_event_id AND s.tenant_key = v_stash.tenant_key;
    END IF;
    -- No row, or another reveal of the same search or an end_run deleted it
    -- first (this one waited for it): one refusal. An end_run that came
    -- between the search's commit and this reveal dropped the hits: say so,
    -- not that the search is unknown.
    IF NOT FOUND THEN
        IF EXISTS (SELECT FROM history.runs r WHERE r.run_token = p_run AND r.tenant_key = v_tenant AND r.ended_at IS NOT NULL) THEN
            RAISE EXCEPTION 'run % has ended', history._run_label(p_run)
                USING ERRCODE = 'HS002', DETAIL = 'The run ended before this search''s hits were revealed; they are dropped.',
                      HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
        END IF;
        RAISE EXCEPTION 'search % has no hits waiting for this run', p_search_event_id
            USING ERRCODE = 'HS001', HINT = 'A search''s hits are revealed once, to the run that searched.';
    END IF;
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

COMMENT ON FUNCTION history._reveal_in_tenant(integer, uuid, uuid, text, boolean) IS
    'Internal: a search''s hits, once, after its audit is committed and flushed (delegated to the tenant''s worker on Citus)';
REVOKE ALL ON FUNCTION history._reveal_in_tenant(integer, uuid, uuid, text, boolean) FROM PUBLIC;
