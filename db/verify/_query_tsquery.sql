-- Verify history-search:_query_tsquery on pg
BEGIN;

SELECT 'history._query_tsquery(text, regconfig[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_tsquery(text, regconfig[], integer)', 'execute'))::int;

ROLLBACK;
