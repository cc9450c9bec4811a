-- Deploy history-search:run_status to pg
-- requires: run_tables
-- The function lives in db/functions/run_status.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- run_status: 'open' or 'ended' for a run token; HS002 for an unknown one.
-- For a host (the MCP server) that must refuse a dead run before it serves a
-- turn, without spending a search: it reads the run, writes nothing, and is
-- not audited. Knowing the token is already the capability to search, so it
-- tells the caller nothing new. Errors never repeat the token (server logs).
CREATE OR REPLACE FUNCTION history.run_status(p_run uuid)
RETURNS text
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_ended_at timestamptz;
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'p_run must be a run token, got NULL' USING ERRCODE = 'HS001';
    END IF;
    SELECT r.ended_at INTO v_ended_at FROM history.runs r WHERE r.run_token = p_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run' USING ERRCODE = 'HS002';
    END IF;
    RETURN CASE WHEN v_ended_at IS NULL THEN 'open' ELSE 'ended' END;
END
$function$;

COMMENT ON FUNCTION history.run_status(uuid) IS 'history-search: open or ended (HS002 if unknown); not audited, writes nothing';
GRANT EXECUTE ON FUNCTION history.run_status(uuid) TO history_runtime, history_searcher;

RESET ROLE;
COMMIT;
