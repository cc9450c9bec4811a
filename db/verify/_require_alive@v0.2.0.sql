-- Verify history-search:_require_alive on pg
BEGIN;

SELECT 'history._require_alive(bigint, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._require_alive(bigint, text)', 'execute'))::int;

ROLLBACK;
