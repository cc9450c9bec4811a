-- Verify history-search:record_reply on pg
BEGIN;

SELECT 'history.record_reply(uuid, text, text, timestamptz)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.record_reply(uuid, text, text, timestamptz)'::regprocedure;

ROLLBACK;
