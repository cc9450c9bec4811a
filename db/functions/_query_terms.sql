-- _query_terms: the terms of a query text, analysed as documents are
-- (_query_lexemes; docs/text-analysis.md): its distinct lexemes, first seen
-- first, at most p_max_terms. A search's coverage and matched_terms count
-- these; _query_tsquery combines them into what a message must match.
CREATE OR REPLACE FUNCTION history._query_terms(p_query text, p_configs regconfig[], p_max_terms integer)
RETURNS text[]
LANGUAGE sql
IMMUTABLE PARALLEL SAFE STRICT
AS $function$
    SELECT coalesce(pg_catalog.array_agg(f.lexeme ORDER BY f.first_seen, f.lexeme), '{}')
      FROM (SELECT l.lexeme, pg_catalog.min(l.seen) AS first_seen
              FROM history._query_lexemes(p_query, p_configs) l
             GROUP BY l.lexeme
             ORDER BY first_seen, l.lexeme
             LIMIT p_max_terms) f
$function$;

COMMENT ON FUNCTION history._query_terms(text, regconfig[], integer) IS
    'Internal: a query''s terms (distinct lexemes, first seen first), analysed as documents are';
REVOKE ALL ON FUNCTION history._query_terms(text, regconfig[], integer) FROM PUBLIC;
