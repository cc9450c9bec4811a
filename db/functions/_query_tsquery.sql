-- _query_tsquery: what a message must match for a query text
-- (_query_analysis): the OR of its alternatives, a typed identifier whole or
-- all its atoms. NULL when the query has no term.
CREATE OR REPLACE FUNCTION history._query_tsquery(p_query text, p_configs regconfig[], p_max_terms integer)
RETURNS tsquery
LANGUAGE sql
IMMUTABLE PARALLEL SAFE STRICT
AS $function$
    SELECT (history._query_analysis(p_query, p_configs, p_max_terms)).query
$function$;

COMMENT ON FUNCTION history._query_tsquery(text, regconfig[], integer) IS
    'Internal: the tsquery of a query text: OR of its alternatives, an identifier whole or all its atoms';
REVOKE ALL ON FUNCTION history._query_tsquery(text, regconfig[], integer) FROM PUBLIC;
