-- Deploy history-search:purge to pg
-- The procedure lives in db/functions/purge.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- purge: remove the runs that ended before p_before, with their audit rows
-- (search events), evidence and trace, in foreign-key order (evidence and
-- trace, then events, then the run), p_batch_size runs per committed batch.
--   * Never an open run: only runs with ended_at < p_before (a run never reopens).
--   * Interrupted, nothing is half-deleted (a batch is one transaction) and a
--     new CALL continues with what is left; no progress table is needed.
--   * Oldest first (by ended_at); a run whose row another transaction holds
--     is skipped (SKIP LOCKED) and left to the next purge.
--   * One NOTICE per batch: 'purge: batch <n>: <runs> runs, <events> searches,
--     <evidence> evidence rows, <trace> trace rows (total <rows> rows)'.
-- A procedure that commits (written COMMIT AND NO CHAIN, as reindex_documents):
-- CALL it at top level, outside a transaction block, as the schema owner or
-- a superuser (it runs as its caller, with no SET clause, so that it may commit;
-- hence the qualified operators).
CREATE OR REPLACE PROCEDURE history.purge(p_before timestamptz, p_batch_size integer DEFAULT 500)
LANGUAGE plpgsql
AS $procedure$
DECLARE
    v_runs     bigint[];
    v_batch    integer := 0;
    v_evidence bigint;
    v_trace    bigint;
    v_events   bigint;
    v_done     bigint;
    v_total    bigint := 0;
    v_total_runs bigint := 0;
    v_tenants  integer[];
    v_tenant   integer;
BEGIN
    IF p_before IS NULL OR NOT pg_catalog.isfinite(p_before) THEN
        RAISE EXCEPTION 'p_before must be a finite timestamp, got %', coalesce(p_before::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;
    IF p_batch_size IS NULL OR p_batch_size OPERATOR(pg_catalog.<) 1 THEN
        RAISE EXCEPTION 'p_batch_size must be at least 1, got %', coalesce(p_batch_size::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;

    -- Tenant by tenant, each statement naming it: on Citus a single-shard
    -- statement, the only kind that takes row locks there.
    v_tenants := ARRAY(SELECT t.tenant_key FROM history.tenants t ORDER BY t.tenant_key);
    FOREACH v_tenant IN ARRAY v_tenants LOOP
        LOOP
            SELECT coalesce(pg_catalog.array_agg(r.run_key ORDER BY r.run_key), '{}') INTO v_runs
              FROM (SELECT r.run_key FROM history.runs r
                     WHERE r.tenant_key OPERATOR(pg_catalog.=) v_tenant
                       AND r.ended_at OPERATOR(pg_catalog.<) p_before
                     ORDER BY r.ended_at, r.run_key
                     LIMIT p_batch_size
                       FOR UPDATE SKIP LOCKED) r;
            EXIT WHEN pg_catalog.cardinality(v_runs) OPERATOR(pg_catalog.=) 0;

            DELETE FROM history.run_evidence x
             WHERE x.tenant_key OPERATOR(pg_catalog.=) v_tenant AND x.run_key OPERATOR(pg_catalog.=) ANY (v_runs);
            GET DIAGNOSTICS v_evidence = ROW_COUNT;
            DELETE FROM history.run_trace x
             WHERE x.tenant_key OPERATOR(pg_catalog.=) v_tenant AND x.run_key OPERATOR(pg_catalog.=) ANY (v_runs);
            GET DIAGNOSTICS v_trace = ROW_COUNT;
            DELETE FROM history.conversation_search_events x
             WHERE x.tenant_key OPERATOR(pg_catalog.=) v_tenant AND x.run_key OPERATOR(pg_catalog.=) ANY (v_runs);
            GET DIAGNOSTICS v_events = ROW_COUNT;
            DELETE FROM history.runs x
             WHERE x.tenant_key OPERATOR(pg_catalog.=) v_tenant AND x.run_key OPERATOR(pg_catalog.=) ANY (v_runs);
            GET DIAGNOSTICS v_done = ROW_COUNT;
            COMMIT AND NO CHAIN;

            v_batch := v_batch OPERATOR(pg_catalog.+) 1;
            v_total_runs := v_total_runs OPERATOR(pg_catalog.+) v_done;
            v_total := v_total OPERATOR(pg_catalog.+) v_done OPERATOR(pg_catalog.+) v_events
                       OPERATOR(pg_catalog.+) v_evidence OPERATOR(pg_catalog.+) v_trace;
            RAISE NOTICE 'purge: batch %: % runs, % searches, % evidence rows, % trace rows (total % runs, % rows)',
                v_batch, v_done, v_events, v_evidence, v_trace, v_total_runs, v_total;
        END LOOP;
    END LOOP;
    RAISE NOTICE 'purge: done, % runs and % rows in all, ended before %',
        v_total_runs, v_total, pg_catalog.to_char(p_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
END
$procedure$;

COMMENT ON PROCEDURE history.purge(timestamptz, integer) IS
    'Remove runs that ended before p_before with their search events, evidence and trace, in committed batches (resumable)';
REVOKE ALL ON PROCEDURE history.purge(timestamptz, integer) FROM PUBLIC;

RESET ROLE;
COMMIT;
