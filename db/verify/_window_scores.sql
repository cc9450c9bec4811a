-- Verify history-search:_window_scores on pg
BEGIN;

SELECT 1 / (NOT pg_catalog.has_function_privilege(
    'public', 'history._window_scores(bigint[], text[], timestamptz[], float8[], tsvector[], bigint[], tsvector[], '
              'text[], float8[], history.search_settings, integer)', 'execute'))::int;

ROLLBACK;
