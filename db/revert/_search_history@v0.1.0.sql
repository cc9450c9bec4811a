-- Revert history-search:_search_history from pg
BEGIN;

DROP FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer);

COMMIT;
