-- Verify history-search:_lineage_passes on pg
BEGIN;

SELECT 'history._lineage_passes(integer, bigint, bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._lineage_passes(integer, bigint, bigint[])', 'execute'))::int;

ROLLBACK;
