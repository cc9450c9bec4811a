-- Verify history-search:upsert_account on pg
BEGIN;

SELECT 'history.upsert_account(text, text, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.upsert_account(text, text, text)'::regprocedure;

ROLLBACK;
