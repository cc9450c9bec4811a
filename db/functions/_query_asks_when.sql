-- _query_asks_when: for a query that asks when ("When did ...", "How long
-- has ..."), the words that tell a time (yesterday, last week, ago, a
-- weekday, a month, since, ...) as one tsquery, through the same analysis as
-- every query (history._query_tsquery in p_configs); NULL for any other query.
-- "when" is a stop word, so without this nothing tells the ranking that a
-- turn saying when is wanted (the tells_time signal of history._score).
CREATE OR REPLACE FUNCTION history._query_asks_when(p_query text, p_configs regconfig[])
RETURNS tsquery
LANGUAGE sql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT CASE WHEN lower(left(p_query, 4000)) ~ '(^|[^a-z])(when|how long)([^a-z]|$)'
                THEN history._query_tsquery('yesterday today tonight tomorrow ago last week weekend month year '
                                            'recently since monday tuesday wednesday thursday friday saturday sunday '
                                            'next', p_configs, 64) END
$function$;

COMMENT ON FUNCTION history._query_asks_when(text, regconfig[]) IS
    'Internal: the time words as a tsquery when the query asks when ("when", "how long"), else NULL';
REVOKE ALL ON FUNCTION history._query_asks_when(text, regconfig[]) FROM PUBLIC;
