-- Verify history-search:_query_names on pg
BEGIN;

SELECT 'history._query_names(integer, text[], bigint[], regconfig[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_names(integer, text[], bigint[], regconfig[])', 'execute'))::int;

ROLLBACK;
