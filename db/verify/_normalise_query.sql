-- Verify history-search:_normalise_query on pg
BEGIN;

SELECT 'history._normalise_query(text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._normalise_query(text)', 'execute'))::int;

ROLLBACK;
