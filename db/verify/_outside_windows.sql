-- Verify history-search:_outside_windows on pg
BEGIN;

SELECT 'history._outside_windows(bigint, timestamptz, bigint[], tstzmultirange[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._outside_windows(bigint, timestamptz, bigint[], tstzmultirange[])', 'execute'))::int;

ROLLBACK;
