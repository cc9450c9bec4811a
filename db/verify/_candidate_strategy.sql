-- Verify history-search:_candidate_strategy on pg
BEGIN;

SELECT 'history._candidate_strategy(integer, float8, float8, integer, float8, float8)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._candidate_strategy(integer, float8, float8, integer, float8, float8)', 'execute'))::int;

ROLLBACK;
