-- Verify history-search:_index_message on pg
BEGIN;

SELECT 'history._index_message(bigint, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._index_message(bigint, text)', 'execute'))::int;

ROLLBACK;
