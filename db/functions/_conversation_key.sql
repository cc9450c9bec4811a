-- _conversation_key: the internal key of a conversation id; HS003 if unknown, HS001 if null or blank.
CREATE OR REPLACE FUNCTION history._conversation_key(p_name text, p_conversation_id text, p_tenant_key integer)
RETURNS bigint
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_key bigint;
BEGIN
    PERFORM history._require_id(p_name, p_conversation_id);
    SELECT c.conversation_key INTO v_key FROM history.conversations c WHERE c.conversation_id = p_conversation_id AND c.tenant_key = p_tenant_key;
    IF v_key IS NULL THEN
        RAISE EXCEPTION 'unknown conversation %', quote_literal(p_conversation_id)
            USING ERRCODE = 'HS003', DETAIL = pg_catalog.format('%s names no conversation of tenant %s.', p_name,
                           quote_literal((SELECT t.tenant_id FROM history.tenants t WHERE t.tenant_key = p_tenant_key)));
    END IF;
    RETURN v_key;
END
$function$;

COMMENT ON FUNCTION history._conversation_key(text, text, integer) IS 'Internal: (in one tenant) conversation key of an id, HS003 if unknown';
REVOKE ALL ON FUNCTION history._conversation_key(text, text, integer) FROM PUBLIC;
