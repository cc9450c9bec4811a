-- Verify history-search:_require_alive on pg
BEGIN;

SELECT 'history._require_alive(bigint, text, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._require_alive(bigint, text, integer)', 'execute'))::int;

ROLLBACK;
