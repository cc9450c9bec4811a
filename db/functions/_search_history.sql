-- _search_history: the search behind the procedure history.search_history,
-- in one transaction: it refuses a transaction the procedure did not begin,
-- finds the tenant of the run's token (history.run_tokens) and runs the
-- search there (history._search_in_tenant: the stages, the audit, the hits
-- kept for history._search_reveal, which hands them out once this
-- transaction has committed; docs/decisions.md, "Audit before reveal"). Only
-- a superuser session (tests, a DBA) gets the hits from this function
-- directly.
--
-- On Citus the call of _search_in_tenant, whose tenant is a constant here,
-- is delegated to the worker holding the tenant (`history-search
-- distribute`): the coordinator sends one command, as the owner (a SECURITY
-- DEFINER caller), and the whole search runs on the worker.
CREATE OR REPLACE FUNCTION history._search_history(
    p_run     uuid,
    p_query   text,
    p_speaker text        DEFAULT 'anyone',
    p_after   timestamptz DEFAULT NULL,
    p_before  timestamptz DEFAULT NULL,
    p_limit   integer     DEFAULT 8
) RETURNS history.search_result
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Errors never depend on the caller's session settings (_search_in_tenant pins the rest).
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET client_min_messages = warning
SET jit = off
SET standard_conforming_strings = on
SET max_parallel_workers_per_gather = 0
AS $function$
DECLARE
    v_tenant integer;
    v_result history.search_result;
    v_superuser boolean := (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user);
BEGIN
    -- Only in a transaction a procedure began (its COMMIT starts the next one
    -- with a fresh transaction_timestamp(), later than the CALL's
    -- statement_timestamp(); a transaction begun by a client statement starts
    -- at that statement's time). So a direct call cannot leave the search's
    -- locks (the run row, the hits' FOR SHARE) in a transaction the caller
    -- keeps open. Hits are guarded by history._search_reveal whatever the
    -- caller; this is state, not message text, so it holds in any
    -- lc_messages. A superuser session (tests, a DBA) may call it.
    IF NOT transaction_timestamp() > statement_timestamp() AND NOT v_superuser THEN
        RAISE EXCEPTION 'history._search_history runs only in a transaction begun by CALL history.search_history'
            USING ERRCODE = '42501',
                  HINT = 'CALL history.search_history(p_run, p_query, ..., result => NULL) outside a transaction block.';
    END IF;

    -- An unknown token has no tenant: the search then runs here and refuses
    -- it after checking the arguments (HS001 before HS002, as everywhere).
    SELECT t.tenant_key INTO v_tenant FROM history.run_tokens t WHERE t.run_token = p_run;
    -- FROM, not an expression: Citus delegates a call only in a query it plans.
    SELECT * INTO v_result
      FROM history._search_in_tenant(v_tenant, p_run, p_query, p_speaker, p_after, p_before, p_limit);

    IF NOT v_superuser THEN
        v_result.hits := '{}';
    END IF;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer) IS
    'Internal: the search behind CALL history.search_history (hits are revealed by _search_reveal once committed)';
REVOKE ALL ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer) FROM PUBLIC;
-- The procedure runs as its caller, so its callers need EXECUTE here too; it
-- refuses a call outside a transaction a procedure began, and no hit leaves
-- here (but to a superuser): history._search_reveal hands them out.
GRANT EXECUTE ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer)
    TO history_searcher, history_runtime;
