-- Deploy history-search:_message_key to pg
-- The function lives in db/functions/_message_key.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _message_key: the internal key of a message id; HS003 if unknown, HS001 if null or blank.
CREATE OR REPLACE FUNCTION history._message_key(p_name text, p_message_id text)
RETURNS bigint
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_key bigint;
BEGIN
    PERFORM history._require_id(p_name, p_message_id);
    SELECT m.message_key INTO v_key FROM history.messages m WHERE m.message_id = p_message_id;
    IF v_key IS NULL THEN
        RAISE EXCEPTION 'unknown message %', quote_literal(p_message_id)
            USING ERRCODE = 'HS003', DETAIL = pg_catalog.format('%s names no message.', p_name);
    END IF;
    RETURN v_key;
END
$function$;

COMMENT ON FUNCTION history._message_key(text, text) IS 'Internal: message key of an id, HS003 if unknown';
REVOKE ALL ON FUNCTION history._message_key(text, text) FROM PUBLIC;

RESET ROLE;
COMMIT;
