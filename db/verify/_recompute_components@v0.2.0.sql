-- Verify history-search:_recompute_components on pg
BEGIN;

SELECT 'history._recompute_components(bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._recompute_components(bigint[])', 'execute'))::int;

ROLLBACK;
