-- Verify history-search:_newest_matches_slices on pg
BEGIN;

SELECT 'history._newest_matches_slices(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._newest_matches_slices(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

ROLLBACK;
