-- post_message: record a message (its created event), its lineage and its
-- search projection. Re-posting the same id with identical conversation,
-- author, created text, time and sources is a no-op; anything else is HS004.
-- It finds the tenant's key and does the work there
-- (history._post_message_in_tenant): on Citus that call, whose tenant is a
-- constant here, is delegated to the worker holding the tenant, sent as the
-- owner (this is a SECURITY DEFINER function) in one command.
CREATE OR REPLACE FUNCTION history.post_message(
    p_message_id      text,
    p_conversation_id text,
    p_author_id       text,
    p_body            text,
    p_sent_at         timestamptz,
    p_sources         text[] DEFAULT '{}',
    p_tenant          text DEFAULT 'default'
) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Errors never depend on the caller's session settings (_post_message_in_tenant pins the rest).
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_tenant integer := history._tenant_key(p_tenant);
BEGIN
    -- FROM, not an expression: Citus delegates a call only in a query it plans.
    PERFORM FROM history._post_message_in_tenant(v_tenant, p_message_id, p_conversation_id, p_author_id,
                                                 p_body, p_sent_at, p_sources);
END
$function$;

COMMENT ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) IS
    'Record a message with its lineage (p_sources); idempotent for an identical re-post, HS004 otherwise';
REVOKE ALL ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) TO history_runtime;
