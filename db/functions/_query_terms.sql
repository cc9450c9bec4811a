-- _query_terms: the terms of a query text (_query_analysis): its distinct
-- lexemes, first seen first, at most p_max_terms.
CREATE OR REPLACE FUNCTION history._query_terms(p_query text, p_configs regconfig[], p_max_terms integer)
RETURNS text[]
LANGUAGE sql
IMMUTABLE PARALLEL SAFE STRICT
AS $function$
    SELECT (history._query_analysis(p_query, p_configs, p_max_terms)).terms
$function$;

COMMENT ON FUNCTION history._query_terms(text, regconfig[], integer) IS
    'Internal: a query''s terms (distinct lexemes, first seen first), analysed as documents are';
REVOKE ALL ON FUNCTION history._query_terms(text, regconfig[], integer) FROM PUBLIC;
