-- Verify history-search:end_run on pg
BEGIN;

SELECT 'history.end_run(uuid)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.end_run(uuid)'::regprocedure;

ROLLBACK;
