-- Verify history-search:_key_union on pg
BEGIN;

SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._key_union(bigint[], bigint[])', 'execute'))::int;
SELECT 1 / (history._key_union('{3,1}', '{2,3}') = '{1,2,3}')::int;

ROLLBACK;
