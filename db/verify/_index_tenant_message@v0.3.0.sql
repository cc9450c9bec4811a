-- Verify history-search:_index_tenant_message on pg
BEGIN;

SELECT 'history._index_tenant_message(bigint, text, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._index_tenant_message(bigint, text, integer)', 'execute'))::int;

ROLLBACK;
