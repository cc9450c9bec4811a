-- Verify history-search:_check_search_arguments on pg
BEGIN;

SELECT 'history._check_search_arguments(text, text, timestamptz, timestamptz, integer, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._check_search_arguments(text, text, timestamptz, timestamptz, integer, integer)', 'execute'))::int;

ROLLBACK;
