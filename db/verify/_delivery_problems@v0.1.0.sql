-- Verify history-search:_delivery_problems on pg
BEGIN;

SELECT 'history._delivery_problems(bigint, bigint, bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._delivery_problems(bigint, bigint, bigint[])', 'execute'))::int;

ROLLBACK;
