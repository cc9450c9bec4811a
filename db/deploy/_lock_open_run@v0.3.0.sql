-- Deploy history-search:_lock_open_run to pg
-- The function lives in db/functions/_lock_open_run.sql.
-- Reworked after v0.2.0: Errors name the run by its label, never its token; HS002 while an end_run of the run is under way (a FOR UPDATE NOWAIT probe)
BEGIN;
SET LOCAL ROLE history_owner;

-- _lock_open_run: lock a run row by UPDATE and return it, or HS001/HS002
-- (HS002 also while an end_run of the run is under way).
-- An UPDATE rather than SELECT ... FOR UPDATE: under REPEATABLE READ a
-- concurrent change of the run then raises 40001 instead of going unseen.
-- Errors name the run by history._run_label (a digest prefix), never by its
-- token: the token is the run's credential.
CREATE OR REPLACE FUNCTION history._lock_open_run(p_run uuid)
RETURNS history.runs
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
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
    UPDATE history.runs r SET search_count = r.search_count
     WHERE r.run_token = p_run AND r.tenant_key = v_tenant RETURNING * INTO v_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run %', history._run_label(p_run) USING ERRCODE = 'HS002',
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    IF v_run.ended_at IS NOT NULL THEN
        RAISE EXCEPTION 'run % has ended', history._run_label(p_run) USING ERRCODE = 'HS002', DETAIL = pg_catalog.format('Ended at %s.', v_run.ended_at),
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    -- An end_run under way announces itself with a FOR KEY SHARE lock on this
    -- row before it waits for the row (history.end_run), so a burst queued on
    -- the row does not hold it up: only FOR UPDATE conflicts with that lock.
    -- Try one without waiting, in a block rolled back at once, which lets go
    -- of it (the row stays locked by the UPDATE above).
    BEGIN
        PERFORM FROM history.runs r WHERE r.run_key = v_run.run_key AND r.tenant_key = v_run.tenant_key
            FOR UPDATE NOWAIT;
        RAISE EXCEPTION USING ERRCODE = 'HSZ99';
    EXCEPTION
        WHEN lock_not_available THEN
            RAISE EXCEPTION 'run % has ended', history._run_label(p_run) USING ERRCODE = 'HS002',
                DETAIL = 'end_run is ending it.',
                HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
        WHEN SQLSTATE 'HSZ99' THEN
            NULL;
    END;
    RETURN v_run;
END
$function$;

COMMENT ON FUNCTION history._lock_open_run(uuid) IS 'Internal: lock an open run (UPDATE), HS002 if unknown or ended';
REVOKE ALL ON FUNCTION history._lock_open_run(uuid) FROM PUBLIC;

RESET ROLE;
COMMIT;
