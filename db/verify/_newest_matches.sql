-- Verify history-search:_newest_matches on pg
BEGIN;

SELECT 'history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

SELECT 'history._listed_rows(bigint[], float8, regclass)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._listed_rows(bigint[], float8, regclass)', 'execute'))::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._local_shard(regclass, integer)', 'execute'))::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._local_shards(regclass[], integer)', 'execute'))::int;

ROLLBACK;
