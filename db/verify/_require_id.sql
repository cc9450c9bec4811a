-- Verify history-search:_require_id on pg
BEGIN;

SELECT 'history._require_id(text, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._require_id(text, text)', 'execute'))::int;

ROLLBACK;
