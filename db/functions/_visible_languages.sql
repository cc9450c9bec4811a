-- _visible_languages: the text search configurations one run's query is
-- analysed with: the default language (search_settings.text_search_config)
-- first, then every other language of the run's destination and of the
-- conversations the run may search (p_conversations; NULL means every
-- conversation p_agent is a member of). A conversation the run may not see
-- never changes how its query is read. Ordered as _query_languages orders
-- them, so the same set gives the same array. PL/pgSQL, naming p_tenant:
-- Citus cannot plan a SQL function's parameters over distributed tables.
DROP FUNCTION IF EXISTS history._visible_languages(bigint, bigint[], bigint);
CREATE OR REPLACE FUNCTION history._visible_languages(p_tenant integer, p_agent bigint, p_conversations bigint[],
                                                      p_destination bigint)
RETURNS regconfig[]
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_default regconfig;
    v_others  oid[];
BEGIN
    -- Two statements: on Citus, in a search delegated to the tenant's worker, a
    -- statement may read a reference table or the tenant's shards, and must
    -- name the tenant where it reads a shard.
    SELECT s.text_search_config INTO v_default FROM history.search_settings s;
    SELECT coalesce(array_agg(DISTINCT c.language::oid ORDER BY c.language::oid), '{}') INTO v_others
      FROM history.conversations c
     WHERE c.tenant_key = p_tenant
       AND (c.conversation_key = p_destination
            OR c.conversation_key = ANY (p_conversations)
            OR (p_conversations IS NULL
                AND c.conversation_key IN (SELECT m.conversation_key
                                             FROM history.memberships m
                                            WHERE m.tenant_key = p_tenant
                                              AND m.account_key = p_agent)))
       AND c.language::oid <> v_default::oid;
    RETURN v_default || v_others::regconfig[];
END
$function$;

COMMENT ON FUNCTION history._visible_languages(integer, bigint, bigint[], bigint) IS
    'Internal: the default language, then the other languages of a run''s destination and searchable conversations';
REVOKE ALL ON FUNCTION history._visible_languages(integer, bigint, bigint[], bigint) FROM PUBLIC;
