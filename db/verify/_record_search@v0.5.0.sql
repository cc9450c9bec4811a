-- Verify history-search:_record_search on pg
BEGIN;

SELECT 'history._record_search(history.runs, text, text, timestamptz, timestamptz, integer, integer, history._counting_pass, history._ranking_pass, history._ranked_candidate[], history._admission, boolean, bigint[])'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._record_search(history.runs, text, text, timestamptz, timestamptz, integer, integer, history._counting_pass, history._ranking_pass, history._ranked_candidate[], history._admission, boolean, bigint[])', 'execute'))::int;

ROLLBACK;
