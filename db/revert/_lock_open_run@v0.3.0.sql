-- Revert history-search:_lock_open_run from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_lock_open_run to pg
-- The function lives in db/functions/_lock_open_run.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _lock_open_run: lock a run row by UPDATE and return it, or HS001/HS002.
-- An UPDATE rather than SELECT ... FOR UPDATE: under REPEATABLE READ a
-- concurrent change of the run then raises 40001 instead of going unseen.
CREATE OR REPLACE FUNCTION history._lock_open_run(p_run uuid)
RETURNS history.runs
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_run history.runs;
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'p_run must be a run token, got NULL' USING ERRCODE = 'HS001';
    END IF;
    UPDATE history.runs r SET search_count = r.search_count WHERE r.run_token = p_run RETURNING * INTO v_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run %', p_run USING ERRCODE = 'HS002';
    END IF;
    IF v_run.ended_at IS NOT NULL THEN
        RAISE EXCEPTION 'run % has ended', p_run USING ERRCODE = 'HS002', DETAIL = pg_catalog.format('Ended at %s.', v_run.ended_at);
    END IF;
    RETURN v_run;
END
$function$;

COMMENT ON FUNCTION history._lock_open_run(uuid) IS 'Internal: lock an open run (UPDATE), HS002 if unknown or ended';
REVOKE ALL ON FUNCTION history._lock_open_run(uuid) FROM PUBLIC;

RESET ROLE;
COMMIT;
