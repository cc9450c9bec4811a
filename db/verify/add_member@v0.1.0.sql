-- Verify history-search:add_member on pg
BEGIN;

SELECT 'history.add_member(text, text, timestamptz)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.add_member(text, text, timestamptz)'::regprocedure;

ROLLBACK;
