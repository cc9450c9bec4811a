-- Deploy history-search:_refresh_name_terms to pg
-- requires: core_tables _query_terms _query_languages
-- The function lives in db/functions/_refresh_name_terms.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _refresh_name_terms: keep each account's name terms beside it (its display
-- name analysed as a query is, in every query language), so that a search
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
    v_languages regconfig[] := history._query_languages();
    v_rows      bigint;
BEGIN
    UPDATE history.accounts a
       SET name_terms = coalesce(history._query_terms(a.display_name, v_languages, 2147483647), '{}'),
           name_languages = v_languages::text[]
     WHERE CASE WHEN p_account_keys IS NOT NULL THEN a.account_key = ANY (p_account_keys)
                ELSE p_all OR a.name_languages IS DISTINCT FROM v_languages::text[] END;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$function$;

COMMENT ON FUNCTION history._refresh_name_terms(bigint[], boolean) IS
    'Internal: store accounts'' name terms (display names analysed as queries are) with the languages used';
REVOKE ALL ON FUNCTION history._refresh_name_terms(bigint[], boolean) FROM PUBLIC;

RESET ROLE;
COMMIT;
