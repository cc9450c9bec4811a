-- upsert_conversation: create a conversation, or update its title.
-- Its kind decides who may see it, so changing the kind is HS004. Its
-- language (the text search configuration its messages are analysed with)
-- is set when it is created: p_language, or search_settings.text_search_config
-- when null. A different language for an existing conversation is HS004 too:
-- its documents would need re-indexing (docs/text-analysis.md says how a DBA
-- changes it).
CREATE OR REPLACE FUNCTION history.upsert_conversation(
    p_conversation_id text,
    p_kind            text,
    p_title           text DEFAULT NULL,
    p_language        regconfig DEFAULT NULL,
    p_tenant          text DEFAULT 'default'
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
    v_kind     text;
    v_language regconfig;
    v_default  regconfig;
    v_tenant   integer;
BEGIN
    PERFORM history._require_id('p_conversation_id', p_conversation_id);
    IF p_kind IS NULL OR p_kind NOT IN ('direct', 'group', 'channel') THEN
        RAISE EXCEPTION 'invalid conversation kind: %', coalesce(quote_literal(p_kind), 'NULL')
            USING ERRCODE = 'HS001', HINT = 'p_kind is ''direct'', ''group'' or ''channel''.';
    END IF;
    -- The first upsert naming a tenant creates it (after the input checks, so bad input creates nothing).
    v_tenant := history._tenant_key(p_tenant, true);
    -- Read first: Citus allows no subquery in INSERT ... VALUES.
    v_default := (SELECT s.text_search_config FROM history.search_settings s);

    INSERT INTO history.conversations (tenant_key, conversation_id, kind, title, language)
    VALUES (v_tenant, p_conversation_id, p_kind, p_title,
            coalesce(p_language, v_default))
    ON CONFLICT (conversation_id, tenant_key) DO NOTHING
    RETURNING language INTO v_language;
    IF FOUND THEN
        -- The tenant's first conversation in a language adds it to the query
        -- languages of its runs: its people's stored name terms are re-made with it.
        IF v_language <> v_default
           AND NOT EXISTS (SELECT FROM history.conversations c
                            WHERE c.tenant_key = v_tenant AND c.language = v_language
                              AND c.conversation_id <> p_conversation_id) THEN
            PERFORM history._refresh_name_terms(NULL, false, v_tenant);
        END IF;
        RETURN;
    END IF;

    SELECT c.kind, c.language INTO v_kind, v_language
      FROM history.conversations c
     WHERE c.conversation_id = p_conversation_id AND c.tenant_key = v_tenant FOR UPDATE;
    IF v_kind <> p_kind THEN
        RAISE EXCEPTION 'conversation % is a % conversation, not a % one', quote_literal(p_conversation_id), v_kind, p_kind
            USING ERRCODE = 'HS004', HINT = 'A conversation''s kind cannot change.';
    END IF;
    IF p_language IS NOT NULL AND p_language <> v_language THEN
        RAISE EXCEPTION 'conversation % is analysed as %, not %', quote_literal(p_conversation_id), v_language, p_language
            USING ERRCODE = 'HS004',
                  HINT = 'A conversation''s language is set when it is created; docs/text-analysis.md says how to change it.';
    END IF;
    UPDATE history.conversations c SET title = p_title
     WHERE c.conversation_id = p_conversation_id AND c.tenant_key = v_tenant AND c.title IS DISTINCT FROM p_title;
END
$function$;

COMMENT ON FUNCTION history.upsert_conversation(text, text, text, regconfig, text) IS
    'Create a conversation (direct, group or channel, in a language) or update its title; HS001 bad input, HS004 kind or language change';
REVOKE ALL ON FUNCTION history.upsert_conversation(text, text, text, regconfig, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.upsert_conversation(text, text, text, regconfig, text) TO history_runtime;
