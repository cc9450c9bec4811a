-- Verify history-search:_record_reply_in_tenant on pg
BEGIN;

-- Runs as its caller, and nobody but its owner may call it (history.record_reply does).
SELECT 1 / (NOT p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p
 WHERE p.oid = 'history._record_reply_in_tenant(integer, uuid, text, text, timestamptz)'::regprocedure;

ROLLBACK;
