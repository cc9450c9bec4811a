-- Verify history-search:_identifier_parts on pg
BEGIN;

SELECT 'history._identifier_parts(text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._identifier_parts(text)', 'execute'))::int;

ROLLBACK;
