-- _refresh_name_terms: keep each account's name terms beside it (its display
-- name analysed as a query is, in every query language of its tenant), so that a search
-- compares them with its own terms instead of analysing the names of its
-- whole audience every time (the named_speaker signal, docs/relevance.md).
-- p_account_keys: the accounts to refresh, or NULL for every account whose
-- terms were made in other languages than today's (p_all: every account,
-- when the analysis itself changed). p_tenant_key: only that tenant's accounts
-- (NULL: every tenant; the accounts' own tenants when p_account_keys names them).
-- Returns how many rows it rewrote.
-- A stale row is never wrong, only slower: a search re-analyses the name of
-- any account whose name_languages are not its query languages.
CREATE OR REPLACE FUNCTION history._refresh_name_terms(p_account_keys bigint[], p_all boolean DEFAULT false,
                                                      p_tenant_key integer DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_rows bigint := 0;
    v_n bigint;
    v_tenant integer;
    v_languages regconfig[];
    v_tenants integer[];
BEGIN
    -- Each account's name is analysed in its own tenant's languages. One
    -- UPDATE per tenant, naming it: on Citus each is a single-shard statement
    -- (tenant_key is the distribution column), the only kind that may call a
    -- non-immutable function inside coalesce.
    -- (Two statements, not one joining tenants to accounts: Citus would run
    -- such a join through a connection to the coordinator as the owner.)
    IF p_tenant_key IS NOT NULL THEN
        v_tenants := ARRAY[p_tenant_key];  -- the caller's tenant: no read of every shard to find it
    ELSIF p_account_keys IS NULL THEN
        v_tenants := ARRAY(SELECT t.tenant_key FROM history.tenants t ORDER BY t.tenant_key);
    ELSE
        v_tenants := ARRAY(SELECT DISTINCT x.tenant_key FROM history.accounts x
                            WHERE x.account_key = ANY (p_account_keys) ORDER BY x.tenant_key);
    END IF;
    FOREACH v_tenant IN ARRAY v_tenants
    LOOP
        v_languages := history._query_languages(v_tenant);
        IF p_account_keys IS NOT NULL THEN
            UPDATE history.accounts a
               SET name_terms = coalesce(history._query_terms(a.display_name, v_languages, 2147483647), '{}'),
                   name_languages = v_languages::text[]
             WHERE a.tenant_key = v_tenant AND a.account_key = ANY (p_account_keys);
        ELSE
            UPDATE history.accounts a
               SET name_terms = coalesce(history._query_terms(a.display_name, v_languages, 2147483647), '{}'),
                   name_languages = v_languages::text[]
             WHERE a.tenant_key = v_tenant
               AND (p_all OR a.name_languages IS DISTINCT FROM v_languages::text[]);
        END IF;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_rows := v_rows + v_n;
    END LOOP;
    RETURN v_rows;
END
$function$;

COMMENT ON FUNCTION history._refresh_name_terms(bigint[], boolean, integer) IS
    'Internal: store accounts'' name terms (display names analysed as queries are) with the languages used';
REVOKE ALL ON FUNCTION history._refresh_name_terms(bigint[], boolean, integer) FROM PUBLIC;
