-- Verify history-search:search_reveals on pg
BEGIN;

SELECT search_event_id, tenant_key, run_key, written_by, languages, max_terms, hits, created_at
  FROM history.search_reveals WHERE false;
SELECT 1 / (NOT pg_catalog.has_table_privilege('public', 'history.search_reveals', 'select'))::int;

ROLLBACK;
