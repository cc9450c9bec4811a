-- _tenant_key: the key of a tenant id (docs/tenants.md). A malformed id is
-- HS001, an unknown one HS003, unless p_create (upsert_account and
-- upsert_conversation), which creates it.
CREATE OR REPLACE FUNCTION history._tenant_key(p_tenant text, p_create boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_key integer;
BEGIN
    -- The same rule as the table's CHECK (tenants_id_format); a long value is
    -- refused by its length before any pattern is matched.
    IF p_tenant IS NULL OR length(p_tenant) > 63 OR p_tenant !~ '^[A-Za-z0-9][A-Za-z0-9._:-]*$' THEN
        RAISE EXCEPTION 'p_tenant must be a tenant id, got %', coalesce(quote_literal(left(p_tenant, 100)), 'NULL')
            USING ERRCODE = 'HS001',
                  HINT = 'A tenant id is 1 to 63 letters, digits, ".", "_", ":" or "-", starting with a letter or digit; omit it for ''default''.';
    END IF;
    SELECT t.tenant_key INTO v_key FROM history.tenants t WHERE t.tenant_id = p_tenant;
    IF v_key IS NULL AND p_create THEN
        INSERT INTO history.tenants (tenant_id) VALUES (p_tenant)
        ON CONFLICT (tenant_id) DO NOTHING
        RETURNING tenant_key INTO v_key;
        IF v_key IS NULL THEN  -- created concurrently, committed since
            SELECT t.tenant_key INTO v_key FROM history.tenants t WHERE t.tenant_id = p_tenant;
        END IF;
    END IF;
    IF v_key IS NULL THEN
        RAISE EXCEPTION 'unknown tenant %', quote_literal(p_tenant)
            USING ERRCODE = 'HS003',
                  HINT = 'A tenant comes to exist with the first upsert_account or upsert_conversation naming it.';
    END IF;
    RETURN v_key;
END
$function$;

COMMENT ON FUNCTION history._tenant_key(text, boolean) IS
    'Internal: tenant key of an id; HS001 malformed, HS003 unknown unless p_create';
REVOKE ALL ON FUNCTION history._tenant_key(text, boolean) FROM PUBLIC;
