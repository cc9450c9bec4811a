-- delete_message: append a deleted event and drop the projection row.
-- HS003 for an unknown message, HS004 for one already deleted.
CREATE OR REPLACE FUNCTION history.delete_message(
    p_message_id text,
    p_at         timestamptz,
    p_tenant     text DEFAULT 'default'
) RETURNS void
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
    v_tenant  integer := history._tenant_key(p_tenant);
    v_message bigint := history._message_key('p_message_id', p_message_id, v_tenant);
    v_event   bigint;
BEGIN
    PERFORM history._require_time('p_at', p_at);
    PERFORM history._require_alive(v_message, p_message_id, v_tenant);

    INSERT INTO history.message_events (tenant_key, message_key, event_kind, body, occurred_at)
    VALUES (v_tenant, v_message, 'deleted', NULL, p_at)
    RETURNING event_key INTO v_event;
    UPDATE history.messages SET current_event_key = v_event WHERE message_key = v_message AND tenant_key = v_tenant;
    DELETE FROM history.message_search_documents WHERE message_key = v_message AND tenant_key = v_tenant;
END
$function$;

COMMENT ON FUNCTION history.delete_message(text, timestamptz, text) IS
    'Delete a message (a deleted event; it leaves search); HS003 unknown, HS004 already deleted';
REVOKE ALL ON FUNCTION history.delete_message(text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.delete_message(text, timestamptz, text) TO history_runtime;
