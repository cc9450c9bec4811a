-- Verify history-search:search_history on pg
BEGIN;

SELECT 'history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result)'::regprocedure;
-- a procedure that runs as its caller (so it may COMMIT), not executable by PUBLIC
SELECT 1 / (p.prokind = 'p' AND NOT p.prosecdef AND p.proconfig IS NULL
            AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p
 WHERE p.oid = 'history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result)'::regprocedure;

ROLLBACK;
