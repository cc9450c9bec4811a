-- Verify history-search:_search_history on pg
BEGIN;

SELECT 'history._search_history(uuid, text, text, timestamptz, timestamptz, integer)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history._search_history(uuid, text, text, timestamptz, timestamptz, integer)'::regprocedure;

ROLLBACK;
