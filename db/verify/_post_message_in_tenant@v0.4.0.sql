-- Verify history-search:_post_message_in_tenant on pg
BEGIN;

-- Runs as its caller, and nobody but its owner may call it (history.post_message does).
SELECT 1 / (NOT p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p
 WHERE p.oid = 'history._post_message_in_tenant(integer, text, text, text, text, timestamptz, text[])'::regprocedure;

ROLLBACK;
