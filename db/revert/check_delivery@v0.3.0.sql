-- Revert history-search:check_delivery from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:check_delivery to pg
-- The function lives in db/functions/check_delivery.sql.
-- Reworked after v0.1.0: The delivery audience of a check without a reply: members open now, a future join counting.
BEGIN;
SET LOCAL ROLE history_owner;

-- check_delivery: the run's evidence that no longer passes, with a reason
-- (deleted, perspective, proof_revoked, audience, lineage). Empty means the
-- reply may be delivered. HS002 for an unknown or ended run. A default
-- audience is the destination's members open now (history._delivery_audience).
CREATE OR REPLACE FUNCTION history.check_delivery(p_run uuid)
RETURNS TABLE (message_id text, reason text)
LANGUAGE plpgsql
STABLE
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
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'p_run must be a run token, got NULL' USING ERRCODE = 'HS001';
    END IF;
    SELECT * INTO v_run FROM history.runs r WHERE r.run_token = p_run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run %', p_run USING ERRCODE = 'HS002';
    END IF;
    IF v_run.ended_at IS NOT NULL THEN
        RAISE EXCEPTION 'run % has ended', p_run USING ERRCODE = 'HS002';
    END IF;
    RETURN QUERY
        SELECT d.message_id, d.reason
          FROM history._delivery_problems(v_run.run_key, v_run.agent_key, history._delivery_audience(v_run, NULL)) d;
END
$function$;

COMMENT ON FUNCTION history.check_delivery(uuid) IS
    'Evidence of a run that would no longer pass, with the reason; HS002 unknown or ended run';
REVOKE ALL ON FUNCTION history.check_delivery(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.check_delivery(uuid) TO history_runtime;

RESET ROLE;
COMMIT;
