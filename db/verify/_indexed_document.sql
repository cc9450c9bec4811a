-- Verify history-search:_indexed_document on pg
BEGIN;

SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._indexed_document(text, regconfig)', 'execute'))::int;

ROLLBACK;
