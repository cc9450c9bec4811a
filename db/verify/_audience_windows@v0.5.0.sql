-- Verify history-search:_audience_windows on pg
BEGIN;

SELECT 'history._audience_windows(integer, bigint[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._audience_windows(integer, bigint[], bigint[])', 'execute'))::int;

ROLLBACK;
