-- Verify history-search:_ineligible_by on pg
BEGIN;

SELECT 'history._ineligible_by(bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._ineligible_by(bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[])', 'execute'))::int;

ROLLBACK;
