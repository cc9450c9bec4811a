-- Revert history-search:search_history from pg
BEGIN;

DROP FUNCTION history.search_history(uuid, text, text, timestamptz, timestamptz, integer);

COMMIT;
