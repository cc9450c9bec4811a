-- Verify history-search:_require_time on pg
BEGIN;

SELECT 'history._require_time(text, timestamptz)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._require_time(text, timestamptz)', 'execute'))::int;

ROLLBACK;
