-- _account_key: the internal key of an account id; HS003 if unknown, HS001 if null or blank.
CREATE OR REPLACE FUNCTION history._account_key(p_name text, p_account_id text, p_tenant_key integer)
RETURNS bigint
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_key bigint;
BEGIN
    PERFORM history._require_id(p_name, p_account_id);
    SELECT a.account_key INTO v_key FROM history.accounts a WHERE a.account_id = p_account_id AND a.tenant_key = p_tenant_key;
    IF v_key IS NULL THEN
        RAISE EXCEPTION 'unknown account %', quote_literal(p_account_id)
            USING ERRCODE = 'HS003', DETAIL = pg_catalog.format('%s names no account of tenant %s.', p_name,
                           quote_literal((SELECT t.tenant_id FROM history.tenants t WHERE t.tenant_key = p_tenant_key)));
    END IF;
    RETURN v_key;
END
$function$;

COMMENT ON FUNCTION history._account_key(text, text, integer) IS 'Internal: (in one tenant) account key of an id, HS003 if unknown';
REVOKE ALL ON FUNCTION history._account_key(text, text, integer) FROM PUBLIC;
