-- Verify history-search:upsert_conversation on pg
BEGIN;

SELECT 'history.upsert_conversation(text, text, text, regconfig, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.upsert_conversation(text, text, text, regconfig, text)'::regprocedure;

ROLLBACK;
