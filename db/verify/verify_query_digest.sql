-- Verify history-search:verify_query_digest on pg
BEGIN;

SELECT 'history.verify_query_digest(uuid, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.verify_query_digest(uuid, text)'::regprocedure;

ROLLBACK;
