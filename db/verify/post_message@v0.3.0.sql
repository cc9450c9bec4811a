-- Verify history-search:post_message on pg
BEGIN;

SELECT 'history.post_message(text, text, text, text, timestamptz, text[], text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.post_message(text, text, text, text, timestamptz, text[], text)'::regprocedure;

ROLLBACK;
