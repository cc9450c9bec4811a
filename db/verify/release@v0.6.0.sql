-- Verify history-search:release on pg
BEGIN;

SELECT 1 / (history.schema_release() ~ '^\d+\.\d+\.\d+$')::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history.schema_release()', 'execute'))::int;

ROLLBACK;
