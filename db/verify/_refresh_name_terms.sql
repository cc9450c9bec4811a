-- Verify history-search:_refresh_name_terms on pg
BEGIN;

SELECT 'history._refresh_name_terms(bigint[], boolean, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._refresh_name_terms(bigint[], boolean, integer)', 'execute'))::int;

ROLLBACK;
