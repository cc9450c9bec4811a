-- Verify history-search:_run_label on pg
BEGIN;

SELECT 'history._run_label(uuid)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._run_label(uuid)', 'execute'))::int;
SELECT 1 / (history._run_label('00000000-0000-0000-0000-000000000000') !~ '-')::int;

ROLLBACK;
