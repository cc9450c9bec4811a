-- Verify history-search:erase_account on pg
BEGIN;

SELECT 'history.erase_account(text, timestamptz, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute')
            AND pg_catalog.has_function_privilege('history_runtime', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.erase_account(text, timestamptz, text)'::regprocedure;

ROLLBACK;
