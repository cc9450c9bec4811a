-- Verify history-search:query_period on pg
BEGIN;

SELECT period_weight, period_half_life, tells_time_weight FROM history.search_settings WHERE false;
SELECT (NULL::history._ranked_candidate).period, (NULL::history._ranked_candidate).tells_time;
SELECT 1 / (history._query_asks_when('how long has she played?', '{english}') IS NOT NULL
            AND history._query_asks_when('what did she play?', '{english}') IS NULL)::int;
SELECT 1 / (history._query_period('what happened in May 2023?', '2026-01-01 00:00+00')
            = tstzrange('2023-05-01 00:00+00', '2023-06-01 00:00+00'))::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._query_period(text, timestamptz)', 'execute'))::int;

ROLLBACK;
