-- Verify history-search:edit_message on pg
BEGIN;

SELECT 'history.edit_message(text, text, timestamptz)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.edit_message(text, text, timestamptz)'::regprocedure;

ROLLBACK;
