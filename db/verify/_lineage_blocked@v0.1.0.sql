-- Verify history-search:_lineage_blocked on pg
BEGIN;

SELECT 'history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

ROLLBACK;
