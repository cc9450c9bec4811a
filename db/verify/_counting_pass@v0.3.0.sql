-- Verify history-search:_counting_pass on pg
BEGIN;

SELECT 'history._counting_pass(history._search_scope, tsquery, text, timestamptz, timestamptz, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._counting_pass(history._search_scope, tsquery, text, timestamptz, timestamptz, integer)', 'execute'))::int;

ROLLBACK;
