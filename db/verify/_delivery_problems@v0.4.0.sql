-- Verify history-search:_delivery_problems on pg
BEGIN;

SELECT 'history._delivery_problems(bigint, bigint, bigint[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._delivery_problems(bigint, bigint, bigint[], integer)', 'execute'))::int;

ROLLBACK;
