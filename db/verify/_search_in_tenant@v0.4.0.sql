-- Verify history-search:_search_in_tenant on pg
BEGIN;

-- Runs as its caller, and nobody but its owner may call it (history._search_history does).
SELECT 1 / (NOT p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p
 WHERE p.oid = 'history._search_in_tenant(integer, uuid, text, text, timestamptz, timestamptz, integer)'::regprocedure;

ROLLBACK;
