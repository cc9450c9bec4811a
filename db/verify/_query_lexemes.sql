-- Verify history-search:_query_lexemes on pg
BEGIN;

SELECT 'history._query_lexemes(text, regconfig[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_lexemes(text, regconfig[])', 'execute'))::int;

ROLLBACK;
