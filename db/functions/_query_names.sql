-- _query_names: the people of a run (p_people: its audience, the requester
-- and linked accounts, the agent) the query names, and the query terms that
-- are their names: a name is weak evidence on its own (name_term_weight),
-- what the named person wrote is preferred (named_speaker_weight). Each
-- name's terms are kept with its account (_refresh_name_terms); one made in
-- other languages than this query's is analysed here.
CREATE OR REPLACE FUNCTION history._query_names(
    p_tenant integer, p_terms text[], p_people bigint[], p_languages regconfig[],
    OUT name_terms text[], OUT named_authors bigint[])
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    WITH people AS MATERIALIZED (
        SELECT a.account_key,
               CASE WHEN a.name_languages = p_languages::text[] THEN a.name_terms
                    ELSE coalesce(history._query_terms(a.display_name, p_languages, 2147483647), '{}') END AS terms
          FROM history.accounts a
         WHERE a.account_key = ANY (p_people) AND a.tenant_key = p_tenant  -- p_tenant: the run's
    )
    SELECT ARRAY(SELECT q.t FROM unnest(p_terms) WITH ORDINALITY q(t, o)
                  WHERE EXISTS (SELECT FROM people p WHERE q.t = ANY (p.terms)) ORDER BY q.o),
           coalesce((SELECT array_agg(p.account_key ORDER BY p.account_key) FROM people p WHERE p.terms && p_terms), '{}')
      INTO name_terms, named_authors;
END
$function$;

COMMENT ON FUNCTION history._query_names(integer, text[], bigint[], regconfig[]) IS
    'Internal: the query terms that name people of the run, and those people';
REVOKE ALL ON FUNCTION history._query_names(integer, text[], bigint[], regconfig[]) FROM PUBLIC;
