-- Deploy history-search:edit_message to pg
-- The function lives in db/functions/edit_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- edit_message: append an edited event and reindex the message.
-- HS003 for an unknown message, HS004 for a deleted one.
CREATE OR REPLACE FUNCTION history.edit_message(
    p_message_id text,
    p_body       text,
    p_at         timestamptz
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
    v_message bigint := history._message_key('p_message_id', p_message_id);
    v_event   bigint;
BEGIN
    PERFORM history._require_time('p_at', p_at);
    PERFORM history._require_body(p_body, p_message_id);
    PERFORM history._require_alive(v_message, p_message_id);

    INSERT INTO history.message_events (message_key, event_kind, body, occurred_at)
    VALUES (v_message, 'edited', p_body, p_at)
    RETURNING event_key INTO v_event;
    UPDATE history.messages SET current_event_key = v_event WHERE message_key = v_message;
    PERFORM history._index_message(v_message, p_body);
END
$function$;

COMMENT ON FUNCTION history.edit_message(text, text, timestamptz) IS
    'Replace a live message''s text (an edited event); HS003 unknown, HS004 deleted';
REVOKE ALL ON FUNCTION history.edit_message(text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.edit_message(text, text, timestamptz) TO history_runtime;

RESET ROLE;
COMMIT;
