-- _search_reveal: the hits of one search of a run, handed out once, and only
-- once the search's audit row, evidence and budget charge are committed and
-- flushed to the write-ahead log (docs/decisions.md, "Audit before reveal";
-- history._reveal_in_tenant does it). history.search_history calls it after
-- its COMMIT; called any earlier it refuses, with no hit. p_query is the
-- searched text. p_defer: rather than wait for WAL that others inserted after
-- the search's commit, return NULL; a synchronous commit then flushes it and
-- the next call reveals (history._reveal_in_tenant says how).
--
-- On Citus the run's tenant is found here (history.run_tokens, a reference
-- table read on the coordinator) and the call of _reveal_in_tenant is
-- delegated to the worker that holds it, where the search was written. On
-- one node nothing is read here: _reveal_in_tenant notes the WAL position
-- before it reads anything (a read may prune a page and insert WAL that the
-- reveal would then wait for).
CREATE OR REPLACE FUNCTION history._search_reveal(p_run uuid, p_search_event_id uuid, p_query text,
                                                  p_defer boolean DEFAULT false)
RETURNS history.search_result
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET client_min_messages = warning
SET standard_conforming_strings = on
SET jit = off
SET max_parallel_workers_per_gather = 0
AS $function$
DECLARE
    v_tenant integer;
    v_result history.search_result;
BEGIN
    -- history.search_history's warm-up call (no run): compiled, nothing read.
    IF p_run IS NULL AND p_search_event_id IS NULL THEN
        RETURN NULL;
    END IF;
    IF pg_catalog.current_setting('citus.version', true) IS NOT NULL THEN
        SELECT t.tenant_key INTO v_tenant FROM history.run_tokens t WHERE t.run_token = p_run;
    END IF;
    -- FROM, not an expression: Citus delegates a call only in a query it plans.
    SELECT * INTO v_result FROM history._reveal_in_tenant(v_tenant, p_run, p_search_event_id, p_query, p_defer);
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._search_reveal(uuid, uuid, text, boolean) IS
    'Internal: a search''s hits, once, after its audit is committed and flushed (called by CALL history.search_history)';
REVOKE ALL ON FUNCTION history._search_reveal(uuid, uuid, text, boolean) FROM PUBLIC;
-- The procedure runs as its caller, so its callers need EXECUTE here too.
GRANT EXECUTE ON FUNCTION history._search_reveal(uuid, uuid, text, boolean) TO history_searcher, history_runtime;
