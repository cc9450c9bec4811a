-- Verify history-search:_search_documents_estimate on pg
BEGIN;

SELECT 'history._search_documents_estimate()'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._search_documents_estimate()', 'execute'))::int;

ROLLBACK;
