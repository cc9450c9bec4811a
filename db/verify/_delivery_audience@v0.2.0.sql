-- Verify history-search:_delivery_audience on pg
BEGIN;

SELECT 'history._delivery_audience(history.runs, timestamptz)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._delivery_audience(history.runs, timestamptz)', 'execute'))::int;

ROLLBACK;
