-- Deploy history-search:end_run to pg
-- The function lives in db/functions/end_run.sql.
-- Reworked after 0.1.0: also drops the run's unrevealed hits.
-- Reworked after v0.2.0: end_run announces the end with a key-share lock on the run row before it waits for it: searches queued behind a burst stop at once
BEGIN;
SET LOCAL ROLE history_owner;

-- end_run: end a run; its token is refused from then on, and hits of its
-- searches never revealed are dropped. HS002 if unknown or already ended.
--
-- A search holds the run row (history._lock_open_run) for its whole length,
-- and a burst of them queues on it. end_run first takes a FOR KEY SHARE lock
-- on the row, which every search's lock allows, so it is granted at once:
-- that is the announcement. Each search that gets the row after it finds the
-- lock and stops with HS002 (_lock_open_run's probe), so end_run then waits
-- for at most the one search already under way, not for the queue.
CREATE OR REPLACE FUNCTION history.end_run(p_run uuid)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_run history.runs;
    v_tenant integer;
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'p_run must be a run token, got NULL' USING ERRCODE = 'HS001';
    END IF;
    -- A token names no tenant: find it first (on Citus a read of every shard), then
    -- lock the row in a statement that names it (a single-shard one, the only kind
    -- that takes row locks there). A run never changes tenant.
    SELECT r.tenant_key INTO v_tenant FROM history.runs r WHERE r.run_token = p_run;
    SELECT r.* INTO v_run FROM history.runs r WHERE r.run_token = p_run AND r.tenant_key = v_tenant FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run %', history._run_label(p_run) USING ERRCODE = 'HS002',
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    -- Waits for the search under way, if any; ended meanwhile (record_reply,
    -- another end_run), no row: under REPEATABLE READ that is 40001 instead.
    UPDATE history.runs r SET ended_at = pg_catalog.now()
     WHERE r.run_key = v_run.run_key AND r.tenant_key = v_run.tenant_key AND r.ended_at IS NULL
    RETURNING * INTO v_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % has ended', history._run_label(p_run) USING ERRCODE = 'HS002',
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    -- Hits of this run's searches that were never revealed (the caller went
    -- away between the search's commit and the reveal) will never be.
    DELETE FROM history.search_reveals s WHERE s.run_key = v_run.run_key AND s.tenant_key = v_run.tenant_key;
    INSERT INTO history.run_trace (tenant_key, run_key, entry_kind, detail)
    VALUES (v_run.tenant_key, v_run.run_key, 'end', jsonb_build_object('evidence', v_run.evidence_count));
END
$function$;

COMMENT ON FUNCTION history.end_run(uuid) IS 'End a run; HS002 if unknown or already ended';
REVOKE ALL ON FUNCTION history.end_run(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.end_run(uuid) TO history_runtime;

RESET ROLE;
COMMIT;
