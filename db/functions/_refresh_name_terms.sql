-- _refresh_name_terms: keep each account's name terms beside it (its display
-- name analysed as a query is, in every query language of its tenant), so that a search
-- compares them with its own terms instead of analysing the names of its
-- whole audience every time (the named_speaker signal, docs/relevance.md).
-- p_account_keys: the accounts to refresh, or NULL for every account whose
-- terms were made in other languages than today's (p_all: every account,
-- when the analysis itself changed). Returns how many rows it rewrote.
-- A stale row is never wrong, only slower: a search re-analyses the name of
-- any account whose name_languages are not its query languages.
CREATE OR REPLACE FUNCTION history._refresh_name_terms(p_account_keys bigint[], p_all boolean DEFAULT false)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_rows bigint;
BEGIN
    -- Each account's name is analysed in its own tenant's languages.
    UPDATE history.accounts a
       SET name_terms = coalesce(history._query_terms(a.display_name, l.languages, 2147483647), '{}'),
           name_languages = l.languages::text[]
      FROM (SELECT t.tenant_key, history._query_languages(t.tenant_key) AS languages FROM history.tenants t
             WHERE p_account_keys IS NULL
                OR t.tenant_key IN (SELECT x.tenant_key FROM history.accounts x WHERE x.account_key = ANY (p_account_keys))) l
     WHERE l.tenant_key = a.tenant_key
       AND CASE WHEN p_account_keys IS NOT NULL THEN a.account_key = ANY (p_account_keys)
                ELSE p_all OR a.name_languages IS DISTINCT FROM l.languages::text[] END;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$function$;

COMMENT ON FUNCTION history._refresh_name_terms(bigint[], boolean) IS
    'Internal: store accounts'' name terms (display names analysed as queries are) with the languages used';
REVOKE ALL ON FUNCTION history._refresh_name_terms(bigint[], boolean) FROM PUBLIC;
