-- Verify history-search:check_delivery on pg
BEGIN;

SELECT 'history.check_delivery(uuid)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.check_delivery(uuid)'::regprocedure;

ROLLBACK;
