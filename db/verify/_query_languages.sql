-- Verify history-search:_query_languages on pg
BEGIN;

SELECT 'history._query_languages(integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_languages(integer)', 'execute'))::int;

ROLLBACK;
