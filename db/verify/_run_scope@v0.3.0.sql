-- Verify history-search:_run_scope on pg
BEGIN;

SELECT 'history._run_scope(history.runs)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._run_scope(history.runs)', 'execute'))::int;

ROLLBACK;
