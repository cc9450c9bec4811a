-- Verify history-search:_ranking_pass on pg
BEGIN;

SELECT 'history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean)', 'execute'))::int;

ROLLBACK;
