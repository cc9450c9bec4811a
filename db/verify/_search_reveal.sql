-- Verify history-search:_search_reveal on pg
BEGIN;

SELECT 'history._search_reveal(uuid, uuid, text, boolean)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history._search_reveal(uuid, uuid, text, boolean)'::regprocedure;

ROLLBACK;
