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
    v_tenant integer;
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'p_run must be a run token, got NULL' USING ERRCODE = 'HS001';
    END IF;
    -- The token's tenant first (history.run_tokens): the run is then read in its shard alone on Citus.
    SELECT t.tenant_key INTO v_tenant FROM history.run_tokens t WHERE t.run_token = p_run;
    SELECT * INTO v_run FROM history.runs r WHERE r.run_token = p_run AND r.tenant_key = v_tenant;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown run %', history._run_label(p_run) USING ERRCODE = 'HS002',
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    IF v_run.ended_at IS NOT NULL THEN
        RAISE EXCEPTION 'run % has ended', history._run_label(p_run) USING ERRCODE = 'HS002',
            HINT = 'A run is named by the first 12 hex digits of SHA-256 of its token.';
    END IF;
    RETURN QUERY
        SELECT d.message_id, d.reason
          FROM history._delivery_problems(v_run.run_key, v_run.agent_key, history._delivery_audience(v_run, NULL),
                                          v_run.tenant_key) d;
END
$function$;

COMMENT ON FUNCTION history.check_delivery(uuid) IS
    'Evidence of a run that would no longer pass, with the reason; HS002 unknown or ended run';
REVOKE ALL ON FUNCTION history.check_delivery(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.check_delivery(uuid) TO history_runtime;
