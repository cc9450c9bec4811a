-- Verify history-search:_search_hits on pg
BEGIN;

SELECT 'history._search_hits(integer, history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._search_hits(integer, history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer)', 'execute'))::int;

ROLLBACK;
