-- Verify history-search:_query_terms on pg
BEGIN;

SELECT 'history._query_terms(text, regconfig[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_terms(text, regconfig[], integer)', 'execute'))::int;

ROLLBACK;
