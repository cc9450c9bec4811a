-- Verify history-search:_tenant_key on pg
BEGIN;

SELECT 'history._tenant_key(text, boolean)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._tenant_key(text, boolean)', 'execute'))::int;

ROLLBACK;
