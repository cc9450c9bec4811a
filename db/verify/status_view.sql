-- Verify history-search:status_view on pg
BEGIN;

SELECT release, open_runs, oldest_open_run_age, searches_last_day, budget_exhausted_last_day, searches_by_hour,
       oldest_search_at, reindex_running, reindex_rows_done, reindex_percent
  FROM history.status WHERE false;
SELECT 1 / pg_catalog.has_table_privilege('history_auditor', 'history.status', 'select')::int;
SELECT 1 / pg_catalog.has_function_privilege('history_auditor', 'history.schema_release()', 'execute')::int;

ROLLBACK;
