-- upsert_conversation: create a conversation, or update its title.
-- Its kind decides who may see it, so changing the kind is HS004.
CREATE OR REPLACE FUNCTION history.upsert_conversation(
    p_conversation_id text,
    p_kind            text,
    p_title           text DEFAULT NULL
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
    v_kind text;
BEGIN
    PERFORM history._require_id('p_conversation_id', p_conversation_id);
    IF p_kind IS NULL OR p_kind NOT IN ('direct', 'group', 'channel') THEN
        RAISE EXCEPTION 'invalid conversation kind: %', coalesce(quote_literal(p_kind), 'NULL')
            USING ERRCODE = 'HS001', HINT = 'p_kind is ''direct'', ''group'' or ''channel''.';
    END IF;

    INSERT INTO history.conversations (conversation_id, kind, title)
    VALUES (p_conversation_id, p_kind, p_title)
    ON CONFLICT (conversation_id) DO NOTHING;
    IF FOUND THEN
        RETURN;
    END IF;

    SELECT c.kind INTO v_kind FROM history.conversations c WHERE c.conversation_id = p_conversation_id FOR UPDATE;
    IF v_kind <> p_kind THEN
        RAISE EXCEPTION 'conversation % is a % conversation, not a % one', quote_literal(p_conversation_id), v_kind, p_kind
            USING ERRCODE = 'HS004', HINT = 'A conversation''s kind cannot change.';
    END IF;
    UPDATE history.conversations c SET title = p_title
     WHERE c.conversation_id = p_conversation_id AND c.title IS DISTINCT FROM p_title;
END
$function$;

COMMENT ON FUNCTION history.upsert_conversation(text, text, text) IS
    'Create a conversation (direct, group or channel) or update its title; HS001 bad input, HS004 kind change';
REVOKE ALL ON FUNCTION history.upsert_conversation(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.upsert_conversation(text, text, text) TO history_runtime;
