-- Verify history-search:run_status on pg
BEGIN;

SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.run_status(uuid)'::regprocedure;

ROLLBACK;
