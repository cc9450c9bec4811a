-- _query_languages: the text search configurations a query is analysed with:
-- the default language (search_settings.text_search_config) first, then every
-- other language a conversation of the tenant is analysed in (docs/text-analysis.md). A
-- query then matches each conversation's documents in that conversation's
-- language. The list depends on conversations only, never on messages.
-- A loose scan of conversations_tenant_language_idx: one probe per language.
-- Another tenant's languages never change how this tenant's names are read
-- (no argument: the default tenant, key 1).
CREATE OR REPLACE FUNCTION history._query_languages(p_tenant_key integer DEFAULT 1)
RETURNS regconfig[]
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN (
        WITH RECURSIVE used(language) AS (
            SELECT min(c.language::oid) FROM history.conversations c WHERE c.tenant_key = p_tenant_key
            UNION ALL
            SELECT (SELECT min(c.language::oid) FROM history.conversations c WHERE c.tenant_key = p_tenant_key AND c.language::oid > u.language)
              FROM used u WHERE u.language IS NOT NULL
        )
        SELECT s.text_search_config || coalesce(array_agg(u.language::regconfig ORDER BY u.language)
                                                FILTER (WHERE u.language <> s.text_search_config::oid), '{}')
          FROM history.search_settings s LEFT JOIN used u ON u.language IS NOT NULL
         GROUP BY s.text_search_config
    );
END
$function$;

COMMENT ON FUNCTION history._query_languages(integer) IS
    'Internal: the default language, then every other language of one tenant''s conversations (what a query is analysed with)';
REVOKE ALL ON FUNCTION history._query_languages(integer) FROM PUBLIC;
