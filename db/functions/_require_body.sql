-- _require_body: HS001 unless a message body is text within search_settings.max_body_bytes.
-- Checked by post_message, edit_message and record_reply before they write anything.
CREATE OR REPLACE FUNCTION history._require_body(p_body text, p_message_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_max integer := (SELECT s.max_body_bytes FROM history.search_settings s);
BEGIN
    IF p_body IS NULL THEN
        RAISE EXCEPTION 'p_body must not be NULL (message %)', quote_literal(p_message_id) USING ERRCODE = 'HS001';
    END IF;
    IF octet_length(p_body) > v_max THEN
        RAISE EXCEPTION 'p_body of % bytes is over the maximum of % bytes (message %)', octet_length(p_body),
                v_max, quote_literal(p_message_id)
            USING ERRCODE = 'HS001', HINT = 'Split the text into several messages (history.search_settings.max_body_bytes).';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_body(text, text) IS 'Internal: HS001 unless a body is text within max_body_bytes';
REVOKE ALL ON FUNCTION history._require_body(text, text) FROM PUBLIC;
