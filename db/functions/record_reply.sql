-- record_reply: the final delivery check, then the agent's reply posted into
-- the destination with the run's evidence as its lineage, and the run ended.
-- HS005 naming the failing evidence when anything no longer passes: nothing
-- is posted and the run stays open. A default audience counts the members
-- open now and those who were members when the reply was sent.
-- It finds the tenant of the run's token (history.run_tokens) and does the
-- work there (history._record_reply_in_tenant): on Citus that call, whose
-- tenant is a constant here, is delegated to the worker holding the tenant.
CREATE OR REPLACE FUNCTION history.record_reply(
    p_run        uuid,
    p_message_id text,
    p_body       text,
    p_sent_at    timestamptz
) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Errors never depend on the caller's session settings (_record_reply_in_tenant pins the rest).
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_tenant integer;
BEGIN
    -- An unknown token has no tenant: the call then runs here and refuses it (HS002).
    SELECT t.tenant_key INTO v_tenant FROM history.run_tokens t WHERE t.run_token = p_run;
    -- FROM, not an expression: Citus delegates a call only in a query it plans.
    PERFORM FROM history._record_reply_in_tenant(v_tenant, p_run, p_message_id, p_body, p_sent_at);
END
$function$;

COMMENT ON FUNCTION history.record_reply(uuid, text, text, timestamptz) IS
    'Final delivery check, then post the agent''s reply with the evidence as lineage and end the run; HS005 if blocked';
REVOKE ALL ON FUNCTION history.record_reply(uuid, text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.record_reply(uuid, text, text, timestamptz) TO history_runtime;
