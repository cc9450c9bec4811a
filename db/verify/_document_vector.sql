-- Verify history-search:_document_vector on pg
BEGIN;

SELECT 'history._document_vector(text, regconfig)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._document_vector(text, regconfig)', 'execute'))::int;

ROLLBACK;
