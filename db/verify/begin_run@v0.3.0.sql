-- Verify history-search:begin_run on pg
BEGIN;

SELECT 'history.begin_run(text, text, text, text, text[], text[], text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.begin_run(text, text, text, text, text[], text[], text)'::regprocedure;

ROLLBACK;
