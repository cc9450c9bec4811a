-- Verify history-search:revoke_proof on pg
BEGIN;

SELECT 'history.revoke_proof(text, timestamptz, text)'::regprocedure;
SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p WHERE p.oid = 'history.revoke_proof(text, timestamptz, text)'::regprocedure;

ROLLBACK;
