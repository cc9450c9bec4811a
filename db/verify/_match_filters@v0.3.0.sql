-- Verify history-search:_match_filters on pg
BEGIN;

SELECT 'history._match_filters(bigint[], tstzmultirange[], boolean, bigint[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._match_filters(bigint[], tstzmultirange[], boolean, bigint[], bigint[])', 'execute'))::int;

ROLLBACK;
