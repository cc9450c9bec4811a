-- Verify history-search:_require_body on pg
BEGIN;

SELECT 'history._require_body(text, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._require_body(text, text)', 'execute'))::int;

ROLLBACK;
