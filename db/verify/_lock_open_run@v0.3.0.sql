-- Verify history-search:_lock_open_run on pg
BEGIN;

SELECT 'history._lock_open_run(uuid)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._lock_open_run(uuid)', 'execute'))::int;

ROLLBACK;
