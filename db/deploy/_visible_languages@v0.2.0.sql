-- Deploy history-search:_visible_languages to pg
-- requires: core_tables
-- The function lives in db/functions/_visible_languages.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _visible_languages: the text search configurations one run's query is
-- analysed with: the default language (search_settings.text_search_config)
-- first, then every other language of the run's destination and of the
-- conversations the run may search (p_conversations; NULL means every
-- conversation p_agent is a member of). A conversation the run may not see
-- never changes how its query is read. Ordered as _query_languages orders
-- them, so the same set gives the same array.
CREATE OR REPLACE FUNCTION history._visible_languages(p_agent bigint, p_conversations bigint[], p_destination bigint)
RETURNS regconfig[]
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT s.text_search_config
           || coalesce((SELECT array_agg(l.language::regconfig ORDER BY l.language)
                          FROM (SELECT DISTINCT c.language::oid AS language
                                  FROM history.conversations c
                                 WHERE (c.conversation_key = p_destination
                                        OR c.conversation_key = ANY (p_conversations)
                                        OR (p_conversations IS NULL
                                            AND c.conversation_key IN (SELECT m.conversation_key
                                                                         FROM history.memberships m
                                                                        WHERE m.account_key = p_agent)))
                                   AND c.language::oid <> s.text_search_config::oid) l), '{}')
      FROM history.search_settings s
$function$;

COMMENT ON FUNCTION history._visible_languages(bigint, bigint[], bigint) IS
    'Internal: the default language, then the other languages of a run''s destination and searchable conversations';
REVOKE ALL ON FUNCTION history._visible_languages(bigint, bigint[], bigint) FROM PUBLIC;

RESET ROLE;
COMMIT;
