-- Deploy history-search:_query_languages to pg
-- The function lives in db/functions/_query_languages.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _query_languages: the text search configurations a query is analysed with:
-- the default language (search_settings.text_search_config) first, then every
-- other language a conversation is analysed in (docs/text-analysis.md). A
-- query then matches each conversation's documents in that conversation's
-- language. The list depends on conversations only, never on messages.
-- A loose scan of conversations_language_idx: one probe per language.
CREATE OR REPLACE FUNCTION history._query_languages()
RETURNS regconfig[]
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN (
        WITH RECURSIVE used(language) AS (
            SELECT min(c.language::oid) FROM history.conversations c
            UNION ALL
            SELECT (SELECT min(c.language::oid) FROM history.conversations c WHERE c.language::oid > u.language)
              FROM used u WHERE u.language IS NOT NULL
        )
        SELECT s.text_search_config || coalesce(array_agg(u.language::regconfig ORDER BY u.language)
                                                FILTER (WHERE u.language <> s.text_search_config::oid), '{}')
          FROM history.search_settings s LEFT JOIN used u ON u.language IS NOT NULL
         GROUP BY s.text_search_config
    );
END
$function$;

COMMENT ON FUNCTION history._query_languages() IS
    'Internal: the default language, then every other language of a conversation (what a query is analysed with)';
REVOKE ALL ON FUNCTION history._query_languages() FROM PUBLIC;

RESET ROLE;
COMMIT;
