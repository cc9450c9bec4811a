-- upsert_account: create an account, or update its display name (and the
-- name's terms kept beside it, history._refresh_name_terms).
-- Changing an existing account's kind is a conflicting write (HS004).
CREATE OR REPLACE FUNCTION history.upsert_account(
    p_account_id   text,
    p_kind         text,
    p_display_name text DEFAULT NULL,
    p_tenant       text DEFAULT 'default'
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
    v_key  bigint;
    v_new  bigint;
    v_tenant integer;
BEGIN
    PERFORM history._require_id('p_account_id', p_account_id);
    IF p_kind IS NULL OR p_kind NOT IN ('person', 'agent') THEN
        RAISE EXCEPTION 'invalid account kind: %', coalesce(quote_literal(p_kind), 'NULL')
            USING ERRCODE = 'HS001', HINT = 'p_kind is ''person'' or ''agent''.';
    END IF;
    -- The first upsert naming a tenant creates it (after the input checks, so bad input creates nothing).
    v_tenant := history._tenant_key(p_tenant, true);

    SELECT a.kind INTO v_kind FROM history.accounts a
     WHERE a.account_id = p_account_id AND a.tenant_key = v_tenant FOR UPDATE;
    IF NOT FOUND THEN
        -- A new account is its own identity component.
        -- The key first, then INSERT ... VALUES: on Citus an INSERT ... SELECT of no
        -- distributed table goes through an intermediate result and a two-phase commit.
        v_new := nextval(pg_get_serial_sequence('history.accounts', 'account_key'));
        INSERT INTO history.accounts (account_key, tenant_key, account_id, kind, display_name, component_key)
        VALUES (v_new, v_tenant, p_account_id, p_kind, p_display_name, v_new)
        ON CONFLICT (account_id, tenant_key) DO NOTHING
        RETURNING account_key INTO v_key;
        IF FOUND THEN
            PERFORM history._refresh_name_terms(ARRAY[v_key], false, v_tenant);
            RETURN;
        END IF;
        -- Lost a race with a concurrent insert of the same id: treat as an update.
        SELECT a.kind INTO v_kind FROM history.accounts a
         WHERE a.account_id = p_account_id AND a.tenant_key = v_tenant FOR UPDATE;
    END IF;

    IF v_kind <> p_kind THEN
        RAISE EXCEPTION 'account % is a %, not a %', quote_literal(p_account_id), v_kind, p_kind
            USING ERRCODE = 'HS004', HINT = 'An account''s kind cannot change.';
    END IF;
    UPDATE history.accounts a SET display_name = p_display_name
     WHERE a.account_id = p_account_id AND a.tenant_key = v_tenant AND a.display_name IS DISTINCT FROM p_display_name
    RETURNING a.account_key INTO v_key;
    IF FOUND THEN
        PERFORM history._refresh_name_terms(ARRAY[v_key], false, v_tenant);
    END IF;
END
$function$;

COMMENT ON FUNCTION history.upsert_account(text, text, text, text) IS
    'Create an account (person or agent) or update its display name; HS001 bad input, HS004 kind change';
REVOKE ALL ON FUNCTION history.upsert_account(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.upsert_account(text, text, text, text) TO history_runtime;
