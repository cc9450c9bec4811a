-- edit_message: append an edited event and reindex the message.
-- HS003 for an unknown message, HS004 for a deleted one.
CREATE OR REPLACE FUNCTION history.edit_message(
    p_message_id text,
    p_body       text,
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
    PERFORM history._require_body(p_body, p_message_id);
    PERFORM history._require_alive(v_message, p_message_id, v_tenant);

    INSERT INTO history.message_events (tenant_key, message_key, event_kind, body, occurred_at)
    VALUES (v_tenant, v_message, 'edited', p_body, p_at)
    RETURNING event_key INTO v_event;
    UPDATE history.messages SET current_event_key = v_event WHERE message_key = v_message AND tenant_key = v_tenant;
    PERFORM history._index_tenant_message(v_message, p_body, v_tenant);
END
$function$;

COMMENT ON FUNCTION history.edit_message(text, text, timestamptz, text) IS
    'Replace a live message''s text (an edited event); HS003 unknown, HS004 deleted';
REVOKE ALL ON FUNCTION history.edit_message(text, text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.edit_message(text, text, timestamptz, text) TO history_runtime;
