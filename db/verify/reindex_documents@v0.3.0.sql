-- Verify history-search:reindex_documents on pg
BEGIN;

SELECT 'history.reindex_documents(integer, boolean)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history.reindex_documents(integer, boolean)', 'execute'))::int;
SELECT singleton, started_at, last_message_key, rows_done, rows_changed, finished_at FROM history.reindex_progress WHERE false;

ROLLBACK;
