-- Verify history-search:_newest_matches on pg
BEGIN;

SELECT 'history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

SELECT 'history._listed_rows(bigint[], float8)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._listed_rows(bigint[], float8)', 'execute'))::int;

ROLLBACK;
