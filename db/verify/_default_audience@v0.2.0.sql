-- Verify history-search:_default_audience on pg
BEGIN;

SELECT 'history._default_audience(bigint, bigint, timestamptz)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._default_audience(bigint, bigint, timestamptz)', 'execute'))::int;

ROLLBACK;
