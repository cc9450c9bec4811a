-- Verify history-search:_admit_hits on pg
BEGIN;

SELECT 'history._admit_hits(bigint[], history._hit_neighbours[], bigint[], bigint[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._admit_hits(bigint[], history._hit_neighbours[], bigint[], bigint[], integer)', 'execute'))::int;

ROLLBACK;
