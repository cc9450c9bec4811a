-- Verify history-search:purge on pg
BEGIN;

SELECT 'history.purge(timestamptz, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history.purge(timestamptz, integer)', 'execute')
            AND NOT pg_catalog.has_function_privilege('history_runtime', 'history.purge(timestamptz, integer)', 'execute'))::int;

ROLLBACK;
