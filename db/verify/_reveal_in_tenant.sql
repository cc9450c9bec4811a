-- Verify history-search:_reveal_in_tenant on pg
BEGIN;

-- Runs as its caller, and nobody but its owner may call it (history._search_reveal does).
SELECT 1 / (NOT p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history._reveal_in_tenant(integer, uuid, uuid, text, boolean)'::regprocedure;

ROLLBACK;
