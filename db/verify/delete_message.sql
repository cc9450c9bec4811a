-- Verify history-search:delete_message on pg
BEGIN;

SELECT 'history.delete_message(text, timestamptz, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.delete_message(text, timestamptz, text)'::regprocedure;

ROLLBACK;
