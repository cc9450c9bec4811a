-- Revert history-search:end_run from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:end_run to pg
-- The function lives in db/functions/end_run.sql.
-- Reworked after 0.1.0: also drops the run's unrevealed hits.
BEGIN;
SET LOCAL ROLE history_owner;

-- end_run: end a run; its token is refused from then on, and hits of its
-- searches never revealed are dropped. HS002 if unknown or already ended.
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
    v_run history.runs := history._lock_open_run(p_run);
BEGIN
    UPDATE history.runs SET ended_at = pg_catalog.now() WHERE run_key = v_run.run_key;
    -- Hits of this run's searches that were never revealed (the caller went
    -- away between the search's commit and the reveal) will never be.
    DELETE FROM history.search_reveals s WHERE s.run_key = v_run.run_key AND s.tenant_key = v_run.tenant_key;
    INSERT INTO history.run_trace (run_key, entry_kind, detail)
    VALUES (v_run.run_key, 'end', jsonb_build_object('evidence', v_run.evidence_count));
END
$function$;

COMMENT ON FUNCTION history.end_run(uuid) IS 'End a run; HS002 if unknown or already ended';
REVOKE ALL ON FUNCTION history.end_run(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.end_run(uuid) TO history_runtime;

RESET ROLE;
COMMIT;
