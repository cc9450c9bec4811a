-- Verify history-search:_hit_neighbours on pg
BEGIN;

SELECT 'history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

ROLLBACK;
